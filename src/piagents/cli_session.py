"""The home and the session the command line names, and how the command line fails:
shared by the one-shot modes (cli.py) and the interactive UI (tui/launch.py)."""

from __future__ import annotations

import argparse
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from piagents.agent import Agent
    from piagents.runtime import Runtime

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_STDOUT_CLOSED = 128 + signal.SIGPIPE  # what a shell reports for a process killed by SIGPIPE


class CliError(Exception):
    def __init__(self, message: str, code: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.code = code


def home_of(value: str | None) -> Path:
    from piagents.config import default_home  # not at import: `--version` stays fast

    return Path(value).expanduser() if value else default_home()


def store_settings(url: str | None) -> dict[str, Any] | None:
    """The settings `--store URL` stands for (a bad URL is refused as a usage error)."""
    if url is None:
        return None
    from piagents.store.url import url_problem

    problem = url_problem(url)
    if problem is not None:
        raise CliError(f"--store: {problem}", EXIT_USAGE)
    return {"store": url}


def resolve_session(store: Any, text: str) -> str:
    if store.get_session(text) is not None:
        return text
    matches: list[str] = [r.id for r in store.list_sessions() if r.id.startswith(text)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise CliError(f"No session matches {text!r}. Use `pi-agents sessions` to list them.")
    raise CliError(f"{text!r} matches {len(matches)} sessions; give more of the id.")


async def open_session(runtime: Runtime, args: argparse.Namespace) -> Agent:
    """The root the arguments name: `--session`, `--continue`, or a new one here, on
    the model and thinking level they give (recorded in a reopened session)."""
    from piagents.ai.models import ModelRef

    session = args.session
    if session is not None:
        session = resolve_session(runtime.store, session)
    elif args.continue_:
        session = runtime.latest_session(Path.cwd())
        if session is None:
            raise CliError(
                f"no earlier session in {Path.cwd()} to continue: leave out --continue to "
                "start one, or give --session ID (`pi-agents sessions` lists them)"
            )
    model = args.model or (None if session else runtime.default_model)
    ref = ModelRef.parse(model) if model else None
    if ref is not None:
        # An unknown provider or a missing key fails here, before a session is recorded.
        runtime.providers.resolve(ref)
    # --thinking, else a level in --model (`…:high`), else the session's own.
    thinking = args.thinking or (ref.thinking if ref is not None and args.model else None)
    root = await runtime.open_root(
        Path.cwd(),
        session=session,
        model=args.model if session else None,
        thinking=thinking,
        agent_api=args.agent_api,
    )
    if session is not None:
        # Switching model or thinking level in a resumed session is recorded in it,
        # so `sessions` shows it and a later --continue keeps it.
        record = root.session.record
        if str(root.model) != record.model:
            root.set_model(str(root.model))
        if root.thinking != record.thinking:
            root.set_thinking(root.thinking)
    return root
