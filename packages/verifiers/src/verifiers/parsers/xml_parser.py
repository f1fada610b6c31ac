"""Parser for XML-tagged fields such as ``<think>...</think><answer>...</answer>``."""

from __future__ import annotations

import re
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from verifiers.parsers.parser import Completion, Parser, _identity

__all__ = ["XMLParser"]


def _block_re(tag: str) -> re.Pattern[str]:
    t = re.escape(tag)
    return re.compile(rf"<{t}>\s*(.*?)\s*</{t}>", re.DOTALL)


def _own_lines_re(tag: str) -> re.Pattern[str]:
    t = re.escape(tag)
    return re.compile(rf"(?:^|\n)[ \t]*<{t}>[ \t]*\n.*?\n[ \t]*</{t}>[ \t]*(?=\n|$)", re.DOTALL)


class XMLParser(Parser):
    """Fields given as names or tuples of alternative tag names (the first is canonical).

    ``parse`` finds ``<tag>\\s*(.*?)\\s*</tag>`` per tag; ``parse_answer`` returns the
    ``answer_field`` of the last assistant message that has one, using the *last* match both for
    strings and for messages.
    """

    def __init__(
        self,
        fields: list[str | tuple[str, ...]],
        answer_field: str = "answer",
        extract_fn: Callable[[str], Any] = _identity,
    ) -> None:
        super().__init__(extract_fn)
        self._fields: list[tuple[str, tuple[str, ...]]] = []
        seen: set[str] = set()
        for f in fields:
            alts = (f,) if isinstance(f, str) else tuple(f)
            if not alts or not all(isinstance(a, str) and a for a in alts):
                raise ValueError(f"invalid XMLParser field: {f!r}")
            if seen.intersection(alts):
                raise ValueError(f"duplicate XMLParser tag in {f!r}")
            seen.update(alts)
            self._fields.append((alts[0], alts))
        self.answer_field = answer_field
        self._block = {tag: _block_re(tag) for tag in seen}
        self._own_lines = {tag: _own_lines_re(tag) for tag in seen}

    def get_fields(self) -> list[str]:
        """Canonical field names, in order."""
        return [canonical for canonical, _ in self._fields]

    def parse(self, text: str, strip: bool = True, last: bool = False) -> SimpleNamespace:
        """A namespace with one attribute per canonical field and per alternative tag (None when
        absent); the canonical attribute takes the first alternative found."""
        out: dict[str, str | None] = {}
        for canonical, alts in self._fields:
            value: str | None = None
            for alt in alts:
                v = self._find(text, alt, strip, last)
                out[alt] = v
                if value is None:
                    value = v
            out[canonical] = value
        return SimpleNamespace(**out)

    def _find(self, text: str, tag: str, strip: bool, last: bool) -> str | None:
        pattern = self._block[tag]
        if last:
            found = pattern.findall(text)
            value = found[-1] if found else None
        else:
            match = pattern.search(text)
            value = match.group(1) if match else None
        if value is None:
            return None
        return value.strip() if strip else value

    def parse_answer(self, completion: Completion) -> Any:
        """``extract_fn`` of the last match of ``answer_field`` (messages: newest first); None if
        no assistant text has it."""
        texts = [completion] if isinstance(completion, str) else self._assistant_texts(completion)
        for text in reversed(texts):
            value = getattr(self.parse(text, last=True), self.answer_field, None)
            if value is not None:
                return self.extract_fn(value)
        return None

    def format(self, **kwargs: Any) -> str:
        """Render the given fields (by canonical or alternative name) with canonical tags."""
        known = {alt for _, alts in self._fields for alt in alts}
        unknown = set(kwargs) - known
        if unknown:
            raise ValueError(f"unknown XMLParser fields: {sorted(unknown)}")
        parts = []
        for canonical, alts in self._fields:
            value = next((kwargs[a] for a in alts if kwargs.get(a) is not None), None)
            if value is not None:
                parts.append(f"<{canonical}>\n{value}\n</{canonical}>")
        return "\n".join(parts)

    def get_format_str(self) -> str:
        """A description of the expected output format for system prompts."""
        lines = []
        for canonical, alts in self._fields:
            lines.append(f"<{canonical}>\n...\n</{canonical}>")
            if len(alts) > 1:
                lines[-1] += "  (or " + ", ".join(f"<{a}>" for a in alts[1:]) + ")"
        return "\n".join(lines)

    def format_score(self, text: str) -> float:
        """Score one message in [0, 1]:

        * 0.4 x the share of fields present (any alternative tag, opened and closed);
        * 0.2 for spacing: at least one field present and, after removing every present block
          written as ``<tag>`` newline ... newline ``</tag>`` with each tag on its own line,
          nothing but whitespace is left (tags on their own lines, no stray text);
        * 0.2 if the stripped text starts with the first field's opening tag;
        * 0.2 if it ends with the last field's closing tag.
        """
        text = text.strip()
        present = 0
        rest = text
        for _, alts in self._fields:
            found = [a for a in alts if self._block[a].search(text)]
            if found:
                present += 1
                for a in found:
                    rest = self._own_lines[a].sub("", rest)
        score = 0.4 * present / len(self._fields) if self._fields else 0.0
        if present and not rest.strip():
            score += 0.2
        if self._fields:
            if any(text.startswith(f"<{a}>") for a in self._fields[0][1]):
                score += 0.2
            if any(text.endswith(f"</{a}>") for a in self._fields[-1][1]):
                score += 0.2
        return score

    def get_format_reward_func(self) -> Callable[..., float]:
        """Average :meth:`format_score` over assistant messages (0.0 when there are none)."""

        def format_reward_func(completion: Completion, **kwargs: Any) -> float:
            texts = self._assistant_texts(completion)
            if not texts:
                return 0.0
            return sum(self.format_score(t) for t in texts) / len(texts)

        return format_reward_func
