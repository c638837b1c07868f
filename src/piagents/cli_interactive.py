"""`pi-agents` without a prompt: build the runtime from the command line and run the UI."""

from __future__ import annotations

import argparse
import sys

from piagents.agent import Agent
from piagents.cli_session import EXIT_USAGE, CliError, home_of, open_session, store_settings
from piagents.heap import settle_long_lived
from piagents.hosting import RuntimeHost
from piagents.runtime import Runtime
from piagents.tui.launch import run_app


def _tools(args: argparse.Namespace) -> list[str] | None:
    if args.no_tools:
        return []
    if args.tools:
        return [t.strip() for t in args.tools.split(",") if t.strip()]
    return None


async def run_interactive(args: argparse.Namespace) -> int:
    """Run the app on the session the arguments name; returns the exit code."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise CliError(
            "no prompt given: the interactive UI needs a terminal; "
            'run `pi-agents -p "your prompt"`',
            EXIT_USAGE,
        )
    try:
        runtime = Runtime(
            home_of(args.home),
            model=args.model,
            thinking=args.thinking,
            tools=_tools(args),
            system_prompt=args.system_prompt,
            append_system_prompt=args.append_system_prompt,
            program_only=args.program_only,
            settings=store_settings(args.store),
        )
    except ValueError as exc:
        raise CliError(str(exc), EXIT_USAGE) from exc
    runtime.default_placement = "process"  # as for -p: managed agents get processes of their own
    settle_long_lived(runtime)  # this process is the command's own (piagents.heap)

    async def open_root(rt: Runtime) -> Agent:
        try:
            root: Agent = await open_session(rt, args)
        except CliError as exc:
            raise ValueError(str(exc)) from exc
        return root

    # The host opens the runtime and the root, and closes them; the app shows the root.
    return await run_app(RuntimeHost(runtime, open_root))
