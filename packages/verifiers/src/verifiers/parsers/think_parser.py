"""Parser for ``<think>...</think>answer`` completions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from verifiers.parsers.parser import Completion, Parser, _identity

__all__ = ["ThinkParser"]


class ThinkParser(Parser):
    """Answer = the text after the last ``</think>``, stripped, then ``extract_fn``.

    A missing ``</think>`` means unfinished reasoning and so no answer: ``parse`` returns
    ``extract_fn("")`` (the classic contract). Templates that strip think tags from the completion
    (Qwen3, DeepSeek-R1) therefore never yield an answer; use :class:`MaybeThinkParser` for them.
    """

    def __init__(self, extract_fn: Callable[[str], Any] = _identity) -> None:
        super().__init__(extract_fn)

    def parse(self, text: str) -> Any:
        if "</think>" not in text:
            return self.extract_fn("")
        return self.extract_fn(text.rsplit("</think>", 1)[1].strip())

    @staticmethod
    def follows_format(text: str) -> bool:
        """Starts with ``<think>``, exactly one ``<think>``/``</think>``, text after it."""
        text = text.strip()
        return (
            text.startswith("<think>")
            and text.count("<think>") == 1
            and text.count("</think>") == 1
            and bool(text.split("</think>", 1)[1].strip())
        )

    def get_format_reward_func(self) -> Callable[..., float]:
        """Share of assistant messages that follow the format (0.0 when there are none)."""

        def format_reward_func(completion: Completion, **kwargs: Any) -> float:
            texts = self._assistant_texts(completion)
            if not texts:
                return 0.0
            return sum(1.0 for t in texts if self.follows_format(t)) / len(texts)

        return format_reward_func
