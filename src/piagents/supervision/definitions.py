"""Agent definitions in three layers: discovery, the roster, and global overrides.

The names of the definitions API, from the modules along its seams: one file is
parsed by `definition_file`, the layers are read by `discovery`, the `roster`
says what a caller may delegate to, and `overrides` writes the global layer.
"""

from __future__ import annotations

from piagents.supervision.definition_file import (
    FIELDS,
    NAME_PATTERN,
    SYSTEM_PROMPT_MODES,
    AgentDefinition,
    DefinitionError,
    Layer,
    SystemPromptMode,
    parse_definition,
)
from piagents.supervision.discovery import DefinitionReport, discover, survey
from piagents.supervision.overrides import UNCHANGED, write_global_override
from piagents.supervision.roster import (
    DefinitionProblem,
    DefinitionRefused,
    Roster,
    definition_record,
)

__all__ = [  # what this module gives, the parsing of one file included
    "FIELDS",
    "NAME_PATTERN",
    "SYSTEM_PROMPT_MODES",
    "UNCHANGED",
    "AgentDefinition",
    "DefinitionError",
    "DefinitionProblem",
    "DefinitionRefused",
    "DefinitionReport",
    "Layer",
    "Roster",
    "SystemPromptMode",
    "definition_record",
    "discover",
    "parse_definition",
    "survey",
    "write_global_override",
]
