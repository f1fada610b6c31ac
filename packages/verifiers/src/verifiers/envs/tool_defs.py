"""An environment's tool definitions, as given and in OpenAI's shape."""

from __future__ import annotations

from typing import Any

from verifiers.client import to_openai_tool
from verifiers.types import Tool


def as_tools(tools: Any) -> list[Any]:
    """Tool definitions as given, with classic `{name, description, parameters}` dicts made
    `vf.Tool`s (0.3 normalises them so); OpenAI-shaped dicts stay as they are."""
    return [
        Tool(**t) if isinstance(t, dict) and not isinstance(t, Tool) and "name" in t else t
        for t in tools or ()
    ]


class OpenAITools:
    """`env.oai_tools`: the environment's `tool_defs` in OpenAI's `{"type": "function", ...}`
    shape (the dict-era name); dict-era environments assign OpenAI-shaped tools to it, and
    the client accepts both shapes."""

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        return [to_openai_tool(t) for t in obj.tool_defs]

    def __set__(self, obj: Any, tools: list[dict[str, Any]] | None) -> None:
        obj.tool_defs = as_tools(tools)
