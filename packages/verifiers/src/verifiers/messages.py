"""Chat messages: what a model request is made of and what a reply's message is.

Messages are plain OpenAI chat dicts. The `*Message` classes below are dict subclasses that
also allow attribute access (`msg.content`), so code written for either the dict-era or the
pydantic-era classic API reads them the same way; they serialise as ordinary JSON objects.
The clients (`verifiers.openai_wire` and up) build replies from these, so this module imports
nothing of the SDK; `verifiers.types` re-exports every name, as the classic API spells them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

SamplingArgs = dict[str, Any]
Messages = list[dict[str, Any]]
ChatMessage = dict[str, Any]  # the 0.1-era name of one chat message
ChatMessages = list[ChatMessage]
MessageType = Literal["chat", "completion"]


class Message(dict):
    """A chat message: a dict that also answers attribute access."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            if name in _OPTIONAL_MESSAGE_FIELDS:
                return None
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value

    def model_dump(self, **_: Any) -> dict[str, Any]:
        """A plain-dict copy (the pydantic-era spelling)."""
        return _plain(self)


_OPTIONAL_MESSAGE_FIELDS = frozenset(
    {"content", "tool_calls", "tool_call_id", "name", "reasoning_content"}
)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


class FunctionCall(Message):
    """The `function` part of a tool call: `name` and `arguments` (a JSON string)."""

    __slots__ = ()

    def __init__(self, name: str = "", arguments: Any = "{}", **extra: Any) -> None:
        if not isinstance(arguments, str):  # parsed JSON from a dataset: the API's string form
            arguments = json.dumps(arguments if arguments is not None else {})
        super().__init__(name=name, arguments=arguments, **extra)


class ToolCall(Message):
    """A tool call in an assistant message, in OpenAI's shape
    (`{"id", "type": "function", "function": {"name", "arguments"}}`).

    Read it the way any classic generation does: `call["function"]["name"]` (dict era),
    `call.function.name` (openai objects, 0.1.x) or `call.name` / `call.arguments` (0.1.11+).
    """

    __slots__ = ()

    def __init__(
        self,
        id: str = "",
        name: str | None = None,
        arguments: Any = None,
        type: str = "function",
        function: Any = None,
        **extra: Any,
    ) -> None:
        if function is None:
            function = FunctionCall(name or "", arguments if arguments is not None else "{}")
        elif not isinstance(function, FunctionCall):
            if isinstance(function, dict):
                function = FunctionCall(**function)
            else:  # an openai `Function` object
                function = FunctionCall(function.name, function.arguments)
        super().__init__(id=id, type=type, function=function, **extra)

    def __getattr__(self, name: str) -> Any:
        if name in ("name", "arguments"):
            return self["function"].get(name)
        return super().__getattr__(name)

    @classmethod
    def of(cls, call: Any) -> ToolCall:
        """`call` as a ToolCall: from a dict, an openai object or a 0.1.11+ `ToolCall`."""
        if isinstance(call, ToolCall):
            return call
        if isinstance(call, dict):
            if "function" in call:
                return cls(**call)
            return cls(call.get("id", ""), call.get("name"), call.get("arguments"))
        function = getattr(call, "function", None)
        if function is not None:
            return cls(getattr(call, "id", ""), function=function)
        return cls(getattr(call, "id", ""), getattr(call, "name", ""), call.arguments)


# 0.1.x environments check `isinstance(call, ChatCompletionMessageToolCall)` on the calls of
# assistant messages; here those calls are `ToolCall`s.
ChatCompletionMessageToolCall = ToolCall


class Tool(Message):
    """A tool definition as classic code writes it: `name`, `description`, `parameters`
    (a JSON schema) and `strict`; the client sends it in OpenAI's function shape."""

    __slots__ = ()

    def __init__(
        self,
        name: str,
        description: str = "",
        parameters: dict[str, Any] | None = None,
        strict: bool | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(
            name=name,
            description=description,
            parameters=parameters
            if parameters is not None
            else {"type": "object", "properties": {}},
            strict=strict,
            **extra,
        )


class SystemMessage(Message):
    __slots__ = ()

    def __init__(self, content: Any = "", **extra: Any) -> None:
        super().__init__(role="system", content=content, **extra)

    @classmethod
    def from_path(cls, path: str | Path) -> SystemMessage:
        """A system message whose content is the text of the file at `path`."""
        return cls(content=Path(path).read_text(encoding="utf-8"))


class UserMessage(Message):
    __slots__ = ()

    def __init__(self, content: Any = "", **extra: Any) -> None:
        super().__init__(role="user", content=content, **extra)


class AssistantMessage(Message):
    __slots__ = ()

    def __init__(self, content: Any = None, **extra: Any) -> None:
        calls = extra.get("tool_calls")
        if calls:
            extra["tool_calls"] = [ToolCall.of(c) for c in calls]
        super().__init__(role="assistant", content=content, **extra)


def assistant_message(content: Any) -> AssistantMessage:
    """`AssistantMessage(content=content)` (no tool calls), built without the constructor's
    keyword layers: every model reply's message is made here."""
    message = AssistantMessage.__new__(AssistantMessage)
    message["role"] = "assistant"
    message["content"] = content
    return message


class ToolMessage(Message):
    __slots__ = ()

    def __init__(self, content: Any = "", tool_call_id: str = "", **extra: Any) -> None:
        super().__init__(role="tool", content=content, tool_call_id=tool_call_id, **extra)


__all__ = [
    "AssistantMessage",
    "ChatCompletionMessageToolCall",
    "ChatMessage",
    "ChatMessages",
    "FunctionCall",
    "Message",
    "MessageType",
    "Messages",
    "SamplingArgs",
    "SystemMessage",
    "Tool",
    "ToolCall",
    "ToolMessage",
    "UserMessage",
]
