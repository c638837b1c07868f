"""The scripted model for tests and embedders: `FunctionModel(route)`."""

from piagents.ai.faux import FunctionModel, ModelCall, Reply
from piagents.ai.messages import Message, ToolCall

__all__ = ["FunctionModel", "Message", "ModelCall", "Reply", "ToolCall"]
