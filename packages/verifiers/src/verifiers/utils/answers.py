"""Answer extraction helpers: ``\\boxed{...}`` (math) and ``#### ...`` (GSM8K)."""

from __future__ import annotations

import re

__all__ = ["extract_boxed_answer", "extract_hash_answer"]

_BOX_OPENERS = ("\\boxed{", "\\fbox{")
_NUMBER_WITH_COMMAS = re.compile(r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?")


def extract_boxed_answer(text: str | None, strict: bool = False) -> str:
    """Contents (stripped) of the last ``\\boxed{...}`` or ``\\fbox{...}``, nested braces included.

    Without a box, or when the last box is never closed, returns ``text`` unchanged
    (classic behaviour) or ``""`` when ``strict``.
    """
    if not text:
        return ""
    start, opener = max((text.rfind(o), o) for o in _BOX_OPENERS)
    if start < 0:
        return "" if strict else text
    i = start + len(opener)
    depth = 1
    for j in range(i, len(text)):
        c = text[j]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return text[i:j].strip()
    return "" if strict else text


def extract_hash_answer(text: str | None) -> str | None:
    """The GSM8K answer after ``####`` (first line, stripped; ``1,234`` becomes ``1234``)."""
    if not text or "####" not in text:
        return None
    answer = text.rsplit("####", 1)[1].strip()
    answer = answer.split("\n", 1)[0].strip()
    if _NUMBER_WITH_COMMAS.fullmatch(answer):
        answer = answer.replace(",", "")
    return answer
