"""The interactive terminal UI (Textual). Imported lazily by the command line."""

from piagents.tui.app import PiAgentsApp

__all__ = ["PiAgentsApp"]
