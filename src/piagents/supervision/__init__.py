"""Supervision: managed agents launched from agent definitions, and their owner's controls."""
