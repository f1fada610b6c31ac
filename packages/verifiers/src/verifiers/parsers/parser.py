"""Base parser: turns a completion (text or OpenAI chat messages) into an answer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["Parser", "content_text"]

Completion = str | list[Any]


def _field(message: Any, key: str) -> Any:
    if isinstance(message, dict):
        return message.get(key)
    return getattr(message, key, None)


def content_text(message: Any) -> str:
    """Text of a message's content; text parts of a list content are joined with spaces."""
    content = _field(message, "content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif _field(part, "type") == "text":
                texts.append(str(_field(part, "text") or ""))
        return " ".join(texts)
    return str(content)


def _identity(text: str) -> Any:
    return text


class Parser:
    """``parse(text)`` applies ``extract_fn``; ``parse_answer`` handles strings and messages."""

    def __init__(self, extract_fn: Callable[[str], Any] = _identity) -> None:
        self.extract_fn = extract_fn

    def parse(self, text: str) -> Any:
        return self.extract_fn(text)

    def parse_answer(self, completion: Completion) -> Any:
        """``parse`` of a string, or of the last assistant message's text (None if there is none)."""
        if isinstance(completion, str):
            return self.parse(completion)
        messages = self.get_assistant_messages(completion)
        if not messages:
            return None
        return self.parse(content_text(messages[-1]))

    @staticmethod
    def _by_role(messages: list[Any], role: str) -> list[Any]:
        return [m for m in messages if _field(m, "role") == role]

    def get_assistant_messages(self, messages: list[Any]) -> list[Any]:
        return self._by_role(messages, "assistant")

    def get_user_messages(self, messages: list[Any]) -> list[Any]:
        return self._by_role(messages, "user")

    def get_system_messages(self, messages: list[Any]) -> list[Any]:
        return self._by_role(messages, "system")

    def get_tool_messages(self, messages: list[Any]) -> list[Any]:
        return self._by_role(messages, "tool")

    def _assistant_texts(self, completion: Completion) -> list[str]:
        if isinstance(completion, str):
            return [completion]
        return [content_text(m) for m in self.get_assistant_messages(completion)]

    def get_format_reward_func(self) -> Callable[..., float]:
        """A reward function ``(completion, **kwargs) -> float``; always 1.0 here."""

        def format_reward_func(completion: Completion, **kwargs: Any) -> float:
            return 1.0

        return format_reward_func
