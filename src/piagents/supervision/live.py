"""A generation running in this runtime, as the generation state machine keeps it.

Its fields are read by the actions and the worker; only `generations` writes them.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from piagents.ai.messages import now_ms
from piagents.harness.events import RunOutcome
from piagents.store.records import GenerationRecord
from piagents.supervision.definitions import AgentDefinition
from piagents.supervision.output_tail import OutputTail
from piagents.supervision.ports import AgentHandle


@dataclass(slots=True)
class LiveGeneration:
    """A generation running here: its latest record, its agent and what it is doing."""

    gen: GenerationRecord
    agent: AgentHandle
    definition: AgentDefinition
    tail: OutputTail = field(default_factory=OutputTail)
    ask: asyncio.Future[str] | None = None  # its pending ask_owner question
    interrupting: bool = False  # an interrupt is aborting its run: not an end
    ending: bool = False  # its end is being recorded (or was)
    outcome: RunOutcome | None = None  # of its last run
    last_activity: int = field(default_factory=now_ms)
    retiring: bool = False  # told to hand off (contextRetirement)
