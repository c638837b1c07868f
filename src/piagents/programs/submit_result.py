"""`submit_result`: the tool a Program's Agent is offered for one input sent with a
schema. Its one parameter `value` has that schema; the first valid call sets the
input's result, a value that does not match is an error result naming the mismatch
(the Agent may try again)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from piagents.harness.tools.base import ToolContext, ToolResult
from piagents.programs import agent_texts as texts
from piagents.programs.script_values import JsonValue


def schema_problem(schema: JsonValue) -> str | None:
    """Why `schema` is not a JSON schema a value can be checked against, or None."""
    if not isinstance(schema, dict | bool):
        return f"expected an object, got {type(schema).__name__}"
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        return exc.message
    return None


@dataclass(slots=True)
class Submitted:
    """The result of one schema input: unset until the first valid call."""

    input_id: str
    schema: dict[str, Any] | bool  # checked already (`schema_problem`)
    done: bool = False
    value: JsonValue = None
    validator: jsonschema.Draft202012Validator = field(init=False)

    def __post_init__(self) -> None:
        self.validator = jsonschema.Draft202012Validator(self.schema)


class SubmitResult:
    """The tool, for the run that handles one schema input."""

    name = texts.SUBMIT_RESULT
    description = texts.SUBMIT_RESULT_DESCRIPTION
    prompt_snippet = ""
    prompt_guidelines: Sequence[str] = ()
    validates_arguments = True  # a mismatch gets our own error text, naming it

    def __init__(self, submitted: Submitted) -> None:
        self.submitted = submitted
        self.parameters: dict[str, Any] = {
            "type": "object",
            "properties": {"value": submitted.schema},
            "required": ["value"],
        }

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        slot = self.submitted
        if "value" not in args:
            return ToolResult(texts.value_missing(), is_error=True)
        if slot.done:
            return ToolResult(texts.value_already_taken())
        value = args["value"]
        error = jsonschema.exceptions.best_match(slot.validator.iter_errors(value))
        if error is not None:
            where = "".join(f"[{p!r}]" for p in error.absolute_path)
            return ToolResult(
                texts.value_mismatch(f"value{where}" if where else "", error.message), is_error=True
            )
        slot.value, slot.done = value, True
        return ToolResult(texts.value_taken())
