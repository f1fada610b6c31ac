"""Answer extraction helpers: ``\\boxed{...}`` (math), boxed option letters, ``#### ...``
(GSM8K), and the final part of a response after its reasoning."""

from __future__ import annotations

import re

__all__ = ["extract_boxed_answer", "extract_boxed_choice", "extract_hash_answer", "strip_reasoning"]

_BOX_OPENERS = ("\\boxed{", "\\fbox{")
_NUMBER_WITH_COMMAS = re.compile(r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_LATEX_TEXT = re.compile(r"\\(?:text|textbf|mathrm|mathbf|textrm|mathtt)\s*\{\s*([^{}]*?)\s*\}")


def strip_reasoning(text: str | None) -> str:
    """The final part of a response: after the last ``</think>``; ``""`` while a ``<think>``
    is still open (reasoning cut off before any answer). Correct whether or not the chat
    template injected the opening ``<think>`` into the prompt."""
    text = (text or "").rsplit("</think>", 1)[-1]
    return "" if "<think>" in text else text


def extract_boxed_choice(text: str | None, letters: str) -> str:
    """The option letter in the last ``\\boxed{}`` of the final answer, or ``""``.

    Accepted box contents: ``B``, ``(B)``, ``[B]``, ``B.``, ``\\text{B}`` (and ``\\textbf``,
    ``\\mathrm``, ...), optionally in ``$``. Anything else — option text (``B. 42``), two
    letters, a lower-case letter, a letter not in ``letters`` — is no answer.
    """
    boxed = extract_boxed_answer(strip_reasoning(text), strict=True)
    inner = _LATEX_TEXT.sub(r"\1", boxed).strip().strip("$").strip()
    if len(inner) >= 3 and inner[0] + inner[-1] in ("()", "[]"):
        inner = inner[1:-1].strip()
    inner = inner.removesuffix(".").strip()
    return inner if len(inner) == 1 and inner in letters else ""


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
