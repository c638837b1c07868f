"""The `pi-agents` command line.

pi-agents -p "prompt"          print the final answer (text piped to stdin is appended)
pi-agents --mode json -p "…"   print every event as one JSON line
pi-agents sessions             list sessions
pi-agents export <session>     write a session as Pi-style JSONL
pi-agents trust [PATH]         use the agent definitions of this project (--list, --remove)
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from piagents import __version__, cli_input
from piagents.ai.messages import AssistantMessage
from piagents.cli_session import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_STDOUT_CLOSED,
    EXIT_USAGE,
    CliError,
    home_of,
    open_session,
    resolve_session,
    store_settings,
)
from piagents.counted import counted

if TYPE_CHECKING:
    pass


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="pi-agents",
        description="A coding agent whose Agents spawn, message, wait for and abort each other.",
        epilog="Commands: `pi-agents sessions` lists sessions; "
        "`pi-agents worker --store URL` runs roots of a PostgreSQL store; "
        "`pi-agents workers` lists the runtimes and workers of a store; "
        "`pi-agents export <session> [-o FILE]` writes one as JSONL; "
        "`pi-agents trust [PATH]` trusts a project's agent definitions.",
    )
    p.add_argument(
        "messages",
        nargs="*",
        help="the prompt (several arguments are joined; text piped to standard input is "
        "appended). A single word close to a command is refused as a mistyped command: "
        "put -- before a prompt to send it as it is",
    )
    p.add_argument(
        "-p",
        "--print",
        action="store_true",
        dest="print_mode",
        help="run the prompt, print the final answer and exit",
    )
    p.add_argument(
        "--mode",
        choices=("text", "json"),
        default="text",
        help="output of print mode: the answer (text) or every event as JSON lines",
    )
    p.add_argument("--model", help="provider/modelId[:thinking], e.g. anthropic/claude-sonnet-4-5")
    p.add_argument("--thinking", help="off, minimal, low, medium, high, xhigh or max")
    p.add_argument(
        "-c",
        "--continue",
        action="store_true",
        dest="continue_",
        help="continue the latest session in this directory",
    )
    p.add_argument("--session", help="continue the session with this id")
    p.add_argument(
        "--tools",
        help="comma-separated tools to offer (default: all but program); "
        "+name adds one to the defaults, e.g. --tools +program",
    )
    p.add_argument(
        "--program-only",
        action="store_true",
        help="offer only the program tool; Programs reach the other tools through tools.*",
    )
    p.add_argument("--no-tools", action="store_true", help="offer no built-in tools")
    p.add_argument("--system-prompt", help="replace the default system prompt")
    p.add_argument("--append-system-prompt", help="text appended to the system prompt")
    p.add_argument(
        "--agent-api",
        choices=("agents", "supervision"),
        help="which face of the agent tool the root gets",
    )
    p.add_argument("--home", help="runtime home (default: $PI_AGENTS_HOME or ~/.pi-agents)")
    p.add_argument(
        "--store",
        metavar="URL",
        help="keep everything in this PostgreSQL database (postgresql://user@host:port/db) "
        "instead of the home's SQLite store",
    )
    p.add_argument("--version", action="version", version=f"pi-agents {__version__}")
    return p


SUBCOMMANDS = (*cli_input.COMMANDS, "worker")


def _subcommand_first(args: list[str]) -> list[str]:
    """`--home X sessions …` as `sessions … --home X`, so a command given after the
    home is run, never sent to the model as a prompt."""
    lead: list[str] = []
    rest = args
    while rest and (rest[0] == "--home" or rest[0].startswith("--home=")):
        take = 1 if "=" in rest[0] else 2
        lead, rest = lead + rest[:take], rest[take:]
    if lead and rest and rest[0] in SUBCOMMANDS:
        return [rest[0], *rest[1:], *lead]
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args_list = _subcommand_first(list(sys.argv[1:] if argv is None else argv))
    try:
        code = _command(args_list)
        sys.stdout.flush()  # a closed pipe shows here, not in a flush at exit
        return code
    except BrokenPipeError:
        return stdout_closed()
    except CliError as exc:
        print(f"pi-agents: {exc}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        from piagents.store.base import StoreError

        if not isinstance(exc, StoreError):
            raise
        print(f"pi-agents: {exc}", file=sys.stderr)  # the home or its store: it says why
        return EXIT_FAILED


def stdout_closed() -> int:
    """The reader of our output went away (`pi-agents sessions | head`): end quietly,
    as a process killed by SIGPIPE does, with nothing left to flush at exit."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return EXIT_STDOUT_CLOSED


def _command(args_list: list[str]) -> int:
    if args_list and args_list[0] == "serve":
        from piagents.serve import main as serve_main

        return serve_main(args_list[1:])
    if args_list and args_list[0] == "worker":
        # A managed agent's process: started by its lead, or kept ready by a pool worker.
        if "--generation" in args_list or "--standby" in args_list:
            from piagents.supervision.worker_main import main as worker_main

            return worker_main(args_list[1:])
        from piagents.workers.main import main as pool_main  # `pi-agents worker --store`

        return pool_main(args_list[1:])
    if args_list and args_list[0] == "sessions":
        return _sessions(args_list[1:])
    if args_list and args_list[0] == "workers":
        from piagents import cli_workers

        return cli_workers.main(args_list[1:], _open_store_to_read, home_of)
    if args_list and args_list[0] == "export":
        return _export(args_list[1:])
    if args_list and args_list[0] == "trust":
        return _trust(args_list[1:])
    parser = build_parser()
    args, unknown = parser.parse_known_args(args_list)
    # A mistyped command is named before any other complaint, and never sent as a
    # prompt; but a word with text piped to it is a prompt (`… | pi-agents -p report`).
    mistake = cli_input.mistyped_command(args.messages, args_list)
    if unknown and mistake is None:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        piped = cli_input.read_piped_stdin(
            lambda text: print(f"pi-agents: {text}", file=sys.stderr, flush=True)
        )
    except cli_input.PipedInputError as exc:
        raise CliError(str(exc), EXIT_USAGE) from exc
    if mistake is not None and piped is None:
        raise CliError(mistake, EXIT_USAGE)
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    if piped is not None:
        args.print_mode = True  # the interactive UI needs standard input for the keyboard
    import asyncio

    return asyncio.run(_run(args, cli_input.prompt_text(args.messages, piped)))


def _open_store_to_read(home: Path, url: str | None) -> Any:
    """The store opened read-only (it works in a read-only home, and writes nothing),
    or None when there is none yet: `--store`'s, else the home settings', else the
    home's SQLite store; its leases lapse as the home's settings say."""
    from piagents.config import read_settings_file
    from piagents.store import lease
    from piagents.store.base import StoreError, StoreNotFound
    from piagents.store.selection import open_store
    from piagents.store.url import checked_url

    # Only the store and lease settings: the rest of the file does not matter here.
    path = home / "settings.json"
    raw = read_settings_file(path)[0]
    agents = raw.get("pi-agents")
    lapse = agents.get("leaseLapseMs") if isinstance(agents, dict) else None
    lapse_s = lapse / 1000 if type(lapse) is int and lapse > 0 else lease.LAPSE_S
    if url is not None:
        store_settings(url)  # a bad URL is a usage error
    else:
        url, problem = checked_url(raw.get("store"))
        if problem is not None:
            raise CliError(f"{path}: store: {problem}.")
    try:
        return open_store(home, url, read_only=True, lease_lapse=lapse_s)
    except StoreNotFound:
        return None
    except StoreError as exc:
        raise CliError(str(exc)) from exc


def _sessions(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="pi-agents sessions", description="List sessions.")
    p.add_argument("--home")
    p.add_argument("--store", metavar="URL", help="the PostgreSQL store to read")
    p.add_argument("--all", action="store_true", help="include owned (non-root) sessions")
    args = p.parse_args(argv)
    import datetime

    store = _open_store_to_read(home_of(args.home), args.store)
    if store is None:
        print("No sessions.")
        return EXIT_OK
    try:
        rows = store.list_sessions(roots_only=not args.all)
        prompts = store.latest_requests([r.id for r in rows])
    finally:
        store.close()
    if not rows:
        print("No sessions.")
        return EXIT_OK
    # Columns as wide as their longest value, so a long name or model never shifts the rest.
    name_w = max(16, *(len(r.name or "-") for r in rows))
    model_w = max(28, *(len(r.model or "-") for r in rows))
    cwd_w = max(len(r.cwd) for r in rows)
    print(
        f"{'ID':<36}  {'NAME':<{name_w}}  {'UPDATED':<16}  {'MODEL':<{model_w}}  "
        f"{'CWD':<{cwd_w}}  PROMPT"
    )
    for r in rows:
        updated = datetime.datetime.fromtimestamp(r.updated / 1000).strftime("%Y-%m-%d %H:%M")
        latest = prompts.get(r.id)
        print(
            f"{r.id:<36}  {(r.name or '-'):<{name_w}}  {updated:<16}  "
            f"{(r.model or '-'):<{model_w}}  {r.cwd:<{cwd_w}}  "
            f"{one_line(latest[1]) if latest else '-'}"
        )
    return EXIT_OK


def one_line(text: str, width: int = 60) -> str:
    """`text` on one line, cut to `width` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _export(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="pi-agents export", description="Write a session as Pi-style JSONL."
    )
    p.add_argument("session", help="session id (or a unique prefix)")
    p.add_argument("-o", "--output", help="file to write (default: standard output)")
    p.add_argument("--home")
    p.add_argument("--store", metavar="URL", help="the PostgreSQL store to read")
    args = p.parse_args(argv)
    from piagents.export import export_jsonl
    from piagents.store.base import SessionNotFound

    store = _open_store_to_read(home_of(args.home), args.store)
    if store is None:
        raise CliError(f"No session matches {args.session!r}: there are no sessions yet.")
    try:
        session_id = resolve_session(store, args.session)
        if args.output:
            with open(args.output, "w", encoding="utf-8") as out:
                n = export_jsonl(store, session_id, out)
            exported = counted(n, "entry", "entries")
            print(f"Exported {exported} of session {session_id} to {args.output}", file=sys.stderr)
        else:
            export_jsonl(store, session_id, sys.stdout)
    except SessionNotFound as exc:
        raise CliError(str(exc)) from exc
    except BrokenPipeError:
        if args.output:
            raise CliError(f"cannot write {args.output}: the pipe was closed") from None
        raise  # standard output's reader went away: main ends quietly
    except OSError as exc:
        target = args.output or "standard output"
        raise CliError(f"cannot write {target}: {exc.strerror or exc}") from exc
    finally:
        store.close()
    return EXIT_OK


def _trust(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="pi-agents trust",
        description="Trust a project, so the supervision face uses the agent definitions "
        "in its .pi-agents/agents/ directory.",
    )
    p.add_argument("path", nargs="?", help="the project directory (default: the current one)")
    p.add_argument("--list", action="store_true", help="list the trusted projects")
    p.add_argument("--remove", metavar="PATH", help="stop trusting this project")
    p.add_argument("--home")
    args = p.parse_args(argv)
    if sum((args.path is not None, args.list, args.remove is not None)) > 1:
        p.error("give one of PATH, --list or --remove")
    from piagents.supervision import trust

    home = home_of(args.home)
    try:
        if args.list:
            projects = trust.trusted_projects(home)
            print("\n".join(projects) if projects else "No trusted projects.")
        elif args.remove is not None:
            if not trust.untrust(home, args.remove):
                raise CliError(f"{trust.canonical(args.remove)} is not a trusted project")
            print(f"No longer trusted: {trust.canonical(args.remove)}")
        else:
            print(f"Trusted: {trust.trust(home, args.path or Path.cwd())}")
    except BrokenPipeError:
        raise  # standard output's reader went away: main ends quietly
    except (trust.TrustError, OSError) as exc:
        raise CliError(str(exc)) from exc
    return EXIT_OK


async def _run(args: argparse.Namespace, prompt: str) -> int:
    from piagents.agent import RunFailed
    from piagents.ai.registry import ProviderConfigError
    from piagents.heap import settle_long_lived
    from piagents.runtime import Runtime
    from piagents.store.base import StoreError

    if not prompt:
        if args.print_mode:
            raise CliError('no prompt given: run `pi-agents -p "your prompt"`', EXIT_USAGE)
        from piagents.cli_interactive import run_interactive

        return await run_interactive(args)
    tools = None
    if args.no_tools:
        tools = []
    elif args.tools:
        tools = [t.strip() for t in args.tools.split(",") if t.strip()]
        _check_tool_names(tools)
    try:
        runtime = Runtime(
            home_of(args.home),
            model=args.model,
            thinking=args.thinking,
            tools=tools,
            system_prompt=args.system_prompt,
            append_system_prompt=args.append_system_prompt,
            program_only=args.program_only,
            settings=store_settings(args.store),
        )
    except ValueError as exc:
        raise CliError(str(exc), EXIT_USAGE) from exc
    runtime.wake_policy.in_process = False  # offline roots we message get a background process
    runtime.default_placement = "process"  # managed agents get processes of their own
    settle_long_lived(runtime)  # this process is the command's own (piagents.heap)
    for warning in runtime.warnings:
        print(f"pi-agents: warning: {warning}", file=sys.stderr)
    # Errors are caught inside the `async with`: one escaping it would come out of
    # the runtime's task group wrapped in an ExceptionGroup, as a traceback.
    from piagents import cli_notes
    from piagents.supervision.settle import settled_answer

    failure: CliError | None = None
    try:
        async with runtime:
            try:
                root = await open_session(runtime, args)
                for note in cli_notes.startup_notes(
                    root.model,
                    args.thinking or cli_notes.level_in(args.model),
                    runtime.supervisor.face(root.session.record),
                ):
                    print(f"pi-agents: {note}", file=sys.stderr)
                if args.mode == "json":
                    return await _run_json(runtime, root, prompt)
                answer = await root.prompt(prompt)
                if runtime.supervisor.face(root.session.record) == "supervision":
                    answer = await settled_answer(runtime, root, answer)
                if _stopped_at_output_limit(root.session.context()):
                    print(f"pi-agents: {OUTPUT_LIMIT_NOTE}", file=sys.stderr)
                return _print_answer(answer)
            except CliError as exc:
                failure = exc
            except (RunFailed, StoreError, ProviderConfigError, ValueError) as exc:
                failure = CliError(str(exc))
    except (StoreError, ProviderConfigError, ValueError) as exc:
        raise CliError(str(exc)) from exc
    assert failure is not None
    raise failure


OUTPUT_LIMIT_NOTE = (
    "the model's last reply stopped at its output limit: the answer may be cut short "
    "or missing (a larger model, or a shorter request, may do better)"
)


def _stopped_at_output_limit(context: list[Any]) -> bool:
    """The last message is the model's, and it ran out of output tokens."""
    last = context[-1] if context else None
    return isinstance(last, AssistantMessage) and last.stop_reason == "length"


def _print_answer(answer: str) -> int:
    try:
        print(answer, flush=True)
    except BrokenPipeError:
        return stdout_closed()
    return EXIT_OK


def _check_tool_names(names: list[str]) -> None:
    from piagents.tool_choice import known_tool_names

    known = known_tool_names()
    unknown = [n for n in names if n.removeprefix("+") not in known]
    if unknown:
        raise CliError(
            f"unknown tool {', '.join(unknown)} in --tools; known tools: {', '.join(known)}",
            EXIT_USAGE,
        )


async def _run_json(runtime: Any, root: Any, prompt: str) -> int:
    import asyncio
    import json

    from piagents.events import event_to_json

    closed = asyncio.Event()  # the reader of our output went away

    def emit(line: dict[str, Any]) -> None:
        if closed.is_set():
            return
        try:
            sys.stdout.write(json.dumps(line) + "\n")
            sys.stdout.flush()
        except BrokenPipeError:
            stdout_closed()
            closed.set()

    emit({"type": "session", "id": root.id, "cwd": root.cwd, "model": str(root.model)})
    if closed.is_set():
        return EXIT_STDOUT_CLOSED  # before anything was sent to the model
    runtime.subscribe(lambda event: emit(event_to_json(event)))  # the runtime's events
    run = asyncio.ensure_future(root.prompt_outcome(prompt))
    gone = asyncio.ensure_future(closed.wait())
    await asyncio.wait({run, gone}, return_when=asyncio.FIRST_COMPLETED)
    gone.cancel()
    if closed.is_set():
        # Nobody reads the events: stop the turn, as SIGPIPE would stop the process.
        if not run.done():
            await root.abort()
        await run
        return EXIT_STDOUT_CLOSED
    outcome = run.result()
    if runtime.supervisor.face(root.session.record) == "supervision":
        from piagents.supervision.settle import settled_answer

        await settled_answer(runtime, root, outcome.answer)  # results start more turns
    if closed.is_set():
        return EXIT_STDOUT_CLOSED
    return EXIT_OK if outcome.status == "completed" else EXIT_FAILED


if __name__ == "__main__":
    raise SystemExit(main())
