"""Answer extraction helpers: ``\\boxed{...}`` (math), boxed option letters, ``#### ...``
(GSM8K), and the final part of a response after its reasoning; and, re-exported, the exact
checking layer around math-verify (`ExactChecker`, `normalize_latex`)."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping

# The exact checking layer math graders use around math-verify (see its module).
from verifiers.utils.exact_answers import ExactChecker, normalize_latex

__all__ = [
    "COMPASS_VERIFIER_LABELS",
    "ExactChecker",
    "extract_boxed_answer",
    "extract_boxed_choice",
    "extract_hash_answer",
    "normalize_latex",
    "parse_grade",
    "strip_reasoning",
]

_BOX_OPENERS = ("\\boxed{", "\\fbox{")
_NUMBER_WITH_COMMAS = re.compile(r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_AFTER_GRADE = " \t\r\n.$*`"
# `- LABEL` after a grade's box (CompassVerifier's format), then closing punctuation
_GRADE_LABEL = re.compile(r"-[ \t]*([A-Z]+)[\s.*`]*")
#: The labels CompassVerifier's grading prompts put after the grade: A correct, B incorrect,
#: C an incomplete, repetitive or refused answer.
COMPASS_VERIFIER_LABELS: Mapping[str, tuple[str, ...]] = {
    "A": ("CORRECT",),
    "B": ("INCORRECT",),
    "C": ("INCOMPLETE", "REPETITIVE", "REFUSAL"),
}
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


def _last_box(text: str) -> tuple[str, int] | None:
    """The stripped contents of the last ``\\boxed{}``/``\\fbox{}`` and the index just past
    its closing brace; None without a box or when the last box is never closed."""
    opener = _BOX_OPENERS[0]  # the later of the two openers (no generator: per answer)
    start = text.rfind(opener)
    fbox = text.rfind(_BOX_OPENERS[1])
    if fbox > start:
        start, opener = fbox, _BOX_OPENERS[1]
    if start < 0:
        return None
    i = start + len(opener)
    # from brace to brace with `str.find` (C), not character by character: each step moves
    # past one "{" or "}", so hostile text with many braces still costs one pass
    depth = 1
    j = i
    close = text.find("}", i)
    while close >= 0:
        opening = text.find("{", j, close)
        if opening >= 0:
            depth += 1
            j = opening + 1
            continue
        depth -= 1
        if depth == 0:
            return text[i:close].strip(), close + 1
        j = close + 1
        close = text.find("}", j)
    return None


def extract_boxed_answer(text: str | None, strict: bool = False) -> str:
    """Contents (stripped) of the last ``\\boxed{...}`` or ``\\fbox{...}``, nested braces included.

    Without a box, or when the last box is never closed, returns ``text`` unchanged
    (classic behaviour) or ``""`` when ``strict``.
    """
    if not text:
        return ""
    box = _last_box(text)
    if box is None:
        return "" if strict else text
    return box[0]


def parse_grade(
    reply: str | None,
    grades: str = "ABC",
    labels: Mapping[str, Collection[str]] | None = None,
) -> str | None:
    """A judge's grade, one character of ``grades``, or None when the reply breaks the format.

    Strict on purpose, for judges told to end with ``\\boxed{X}``: the grade is the content of
    the last box of the final answer (`strip_reasoning`), optionally in ``\\text{}``, and
    nothing but whitespace or closing punctuation may follow the box; a reply that is just the
    grade is accepted too. A verdict in prose, several grades, or a box followed by second
    thoughts is no grade, so a sloppy judge can never award credit by accident.

    ``labels`` maps a grade to the words that may name it once more after the box, as in
    CompassVerifier's ``\\boxed{A} - CORRECT`` (`COMPASS_VERIFIER_LABELS`); a label that names
    another grade (``\\boxed{A} - INCORRECT``) is no grade.
    """
    text = strip_reasoning(reply).strip()
    if len(text) == 1 and text in grades:
        return text
    box = _last_box(text)
    if box is None:
        return None
    content = _LATEX_TEXT.sub(r"\1", box[0]).strip()
    if len(content) != 1 or content not in grades:
        return None
    after = text[box[1] :].strip(_AFTER_GRADE)
    if not after:
        return content
    label = _GRADE_LABEL.fullmatch(after)
    if labels and label and label.group(1) in labels.get(content, ()):
        return content
    return None


def extract_hash_answer(text: str | None) -> str | None:
    """The GSM8K answer after ``####`` (first line, stripped; ``1,234`` becomes ``1234``)."""
    if not text or "####" not in text:
        return None
    answer = text.rsplit("####", 1)[1].strip()
    answer = answer.split("\n", 1)[0].strip()
    if _NUMBER_WITH_COMMAS.fullmatch(answer):
        answer = answer.replace(",", "")
    return answer
