"""What the command line says on stderr before a one-shot run: a thinking level the
model cannot use, or a face of the `agent` tool the model cannot lead (pure)."""

from __future__ import annotations

from piagents.ai.models import ModelRef, has_thinking_levels

EMBEDDED = ModelRef("local", "smollm2")


def level_in(model: str | None) -> str | None:
    """The thinking level a `--model provider/id:level` names, if any."""
    try:
        return ModelRef.parse(model).thinking if model else None
    except ValueError:
        return None


def startup_notes(model: ModelRef, level: str | None, face: str) -> list[str]:
    """One line each, without the `pi-agents: ` prefix."""
    notes = []
    if level and level != "off" and not has_thinking_levels(model):
        notes.append(f"{model} has no thinking levels; --thinking {level} has no effect.")
    if face == "supervision" and (model.provider, model.model_id) == (
        EMBEDDED.provider,
        EMBEDDED.model_id,
    ):
        notes.append(
            f"note: the embedded {EMBEDDED} (135M parameters) cannot lead managed agents: "
            "its delegations come out wrong or are refused. For supervision use a real "
            "model (--model, or an API key; see the README)."
        )
    return notes
