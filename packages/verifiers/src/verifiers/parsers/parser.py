"""Base parser: turns a completion (text or OpenAI chat messages) into an answer."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, ClassVar

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


_HELPERS = (
    "get_assistant_messages",
    "_by_role",
    "_message_field",
    "_message_text",
    "_content_to_text",
)


def _identity(text: str) -> Any:
    return text


def _logger_for(obj: object, base_module: str) -> logging.Logger:
    # Upstream 0.3.1 names the logger after the module defining the base class plus the
    # instance's class (`verifiers.legacy.parsers.parser.XMLParser` there, where the classic
    # modules live under `legacy`); ours live at the classic paths themselves.
    return logging.getLogger(f"{base_module}.{type(obj).__name__}")


class Parser:
    """``parse(text)`` applies ``extract_fn``; ``parse_answer`` handles strings and messages.

    ``self.logger`` is ``logging.getLogger("verifiers.parsers.parser.<ClassName>")``.
    """

    # Whether the class keeps the base message helpers `parse_answer` goes through: then it
    # reads the last assistant message's text itself, without a call per helper and per
    # message (decided per class; it runs twice per scored rollout).
    _base_helpers: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._base_helpers = all(getattr(cls, n) is getattr(Parser, n) for n in _HELPERS)

    def __init__(self, extract_fn: Callable[[str], Any] = _identity) -> None:
        self.logger = _logger_for(self, __name__)
        self.extract_fn = extract_fn

    def parse(self, text: str) -> Any:
        return self.extract_fn(text)

    # -- message helpers (upstream's names; messages may be dicts or objects) ---------------
    def _message_field(self, message: Any, field: str, default: Any = None) -> Any:
        if isinstance(message, dict):
            return message.get(field, default)
        return getattr(message, field, default)

    def _content_to_text(self, content: Any) -> str:
        """A message content as text: a string as is; the ``text`` parts of a list joined with
        spaces and stripped; anything else ``""``."""
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            chunks: list[str] = []
            for part in content:
                if isinstance(part, dict):
                    text = part.get("text") if part.get("type") == "text" else None
                else:
                    text = getattr(part, "text", None)
                if isinstance(text, str):
                    chunks.append(text)
            return " ".join(chunks).strip()
        return ""

    def _message_text(self, message: Any) -> str:
        return self._content_to_text(self._message_field(message, "content", "") or "")

    def parse_answer(self, completion: Completion) -> Any:
        """``parse`` of a string, or of the last assistant message's text (None if there is none)."""
        if isinstance(completion, str):
            return self.parse(completion)
        if self._base_helpers:
            for message in reversed(completion):
                if isinstance(message, dict):
                    if message.get("role") != "assistant":
                        continue
                    content = message.get("content", "") or ""
                elif getattr(message, "role", None) == "assistant":
                    content = getattr(message, "content", "") or ""
                else:
                    continue
                if not isinstance(content, str):
                    content = self._content_to_text(content)
                return self.parse(content)
            return None
        messages = self.get_assistant_messages(completion)
        if not messages:
            return None
        return self.parse(self._message_text(messages[-1]))

    def _by_role(self, messages: Any, role: str) -> list[Any]:
        return [m for m in messages if self._message_field(m, "role") == role]

    def get_assistant_messages(self, completion: Any) -> list[Any]:
        return self._by_role(completion, "assistant")

    def get_user_messages(self, completion: Any) -> list[Any]:
        return self._by_role(completion, "user")

    def get_system_messages(self, completion: Any) -> list[Any]:
        return self._by_role(completion, "system")

    def get_tool_messages(self, completion: Any) -> list[Any]:
        return self._by_role(completion, "tool")

    def _assistant_texts(self, completion: Completion) -> list[str]:
        # As upstream, a plain string holds no assistant message (its format reward is 0.0).
        if isinstance(completion, str):
            return []
        return [self._message_text(m) for m in self.get_assistant_messages(completion)]

    def get_format_reward_func(self) -> Callable[..., float]:
        """A reward function ``(completion, **kwargs) -> float``; always 1.0 here."""

        def format_reward_func(completion: Completion, **kwargs: Any) -> float:
            return 1.0

        return format_reward_func
