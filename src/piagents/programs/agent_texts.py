"""The texts of a Program's Agents, as pure functions: what a script's `agent()`,
`send()` and `abort()` raise, and the `submit_result` tool a schema input offers.

PROGRAM-NOTES.md gives none of these lines; they are ours, each saying what
happened and, where there is one, what to do.
"""

from __future__ import annotations

SUBMIT_RESULT = "submit_result"

# How a Program's Agent is shown its Program, the owner of its messages: `from="Program"`
# and the Program's short ID, as `/agents` names it (`Program <id>`).
PROGRAM_SENDER = "Program"

SUBMIT_RESULT_DESCRIPTION = (
    "Submit the result of the current input. Its one parameter `value` must match the "
    "schema the sender asked for; the first valid call sets the result."
)


def value_mismatch(where: str, problem: str) -> str:
    """A `submit_result` call whose value does not match the schema."""
    at = f" at {where}" if where else ""
    return f"The value does not match the schema{at}: {problem}. Call submit_result again."


def value_missing() -> str:
    return "submit_result needs its parameter `value`. Call submit_result again."


def value_taken() -> str:
    return "Result submitted."


def value_already_taken() -> str:
    return "A result was already submitted for this input; the first one stands."


def no_result(name: str) -> str:
    """A schema input whose turn ended without a valid `submit_result` call."""
    return f"Agent {name} ended its turn without calling submit_result with a valid value."


def input_failed(name: str, error: str) -> str:
    return f"Agent {name} failed: {error}" if error else f"Agent {name} failed."


def input_aborted(name: str) -> str:
    return f"Agent {name}'s input was aborted."


def not_an_agent(agent_id: str) -> str:
    return f"No Agent {agent_id} belongs to this Program."


def program_ended() -> str:
    return "The Program has ended: its Agents are offline."


def name_taken(name: str) -> str:
    return f'Name "{name}" is already used by another Agent of this Program.'


def bad_option(option: str, value: object) -> str:
    return f"agent(): `{option}` must be a string, not {type(value).__name__}."


def bad_delivery(deliver_as: object) -> str:
    return f"send(): deliver_as must be followUp, steer or write, not {deliver_as!r}."


def schema_needs_follow_up() -> str:
    return "send(): a schema is only for deliver_as='followUp'."


def bad_schema(problem: str) -> str:
    return f"send(): the schema is not a valid JSON schema: {problem}"


def bad_message(message: object) -> str:
    if isinstance(message, str):
        return "send(): the message must be non-empty text."
    return f"send(): the message must be text, not {type(message).__name__}."


def did_not_stop(name: str) -> str:
    return f"Agent {name} did not stop within the timeout and may still be running."
