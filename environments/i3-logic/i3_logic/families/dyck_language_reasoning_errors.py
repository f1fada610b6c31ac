"""Dyck language reasoning errors: which numbered thoughts of a stack trace are wrong.

SynLogic layout: ``metadata.dyck_sequence`` (a balanced sequence), ``metadata.thoughts`` (the
numbered steps, ``"Thought N: ..."``; the stack steps read ``"<bracket> ; 栈: <stack>"``),
``metadata.error_indices`` (the 1-based numbers of the wrong thoughts, sorted; empty when all are
right), ``n_types``, ``total_length`` and ``n_errors``; ``answer`` is the numbers joined by
``","`` (``""`` when none).

The prompts ask for the numbers alone, comma separated (``7,9,12``), or an empty string ``""``
when every step is right. Read here: the reply's final answer block, or the whole reply when it
is only such an answer. The numbers are compared as a set (as upstream); "no errors" is an empty
block (``<answer></answer>``, ``\\boxed{}``), ``""`` or one of upstream's phrases ("No", "None",
"No errors", "No mistakes", "All correct", 无错误, 无问题). Upstream scored the whole reply with
every non-digit deleted, so a reply without digits was "no errors" and every number in the
reasoning became part of the answer; here anything else in the block scores 0.
"""

from __future__ import annotations

import re

from i3_logic.answers import answer_block_or_bare, clean
from i3_logic.puzzle import AnswerError, Puzzle, PuzzleDataError, require

NAME = "dyck_language_reasoning_errors"
ALIASES = ()
NONE_WORDS = frozenset(
    {
        '""',
        "''",
        "none",
        "no",
        "no error",
        "no errors",
        "no mistake",
        "no mistakes",
        "all correct",
        "无错误",
        "无问题",
    }
)
_NUMBERS = re.compile(r"\[?\s*\d{1,4}(?:\s*[,，]\s*\d{1,4})*\s*\]?")
BARE = re.compile(
    r"\s*[\"']?(?:"
    + _NUMBERS.pattern
    + "|"
    + "|".join(map(re.escape, NONE_WORDS))
    + r")[\"']?\s*\.?\s*",
    re.IGNORECASE,
)
_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)


def _explicitly_empty(text: str) -> bool:
    """The final answer block is written and empty: ``<answer></answer>`` or ``\\boxed{}``."""
    tags = _ANSWER_TAG.findall(text)
    if tags:
        return not tags[-1].strip()
    start = text.rfind("\\boxed{")
    return start >= 0 and text[start + len("\\boxed{") :].lstrip().startswith("}")


def reading(text: str) -> set[int] | None:
    """The set of thought numbers a reply names (empty for "no errors"); None if it is not an
    answer of that form."""
    text = text or ""
    if _explicitly_empty(text):
        return set()
    try:
        block = answer_block_or_bare(text, BARE)
    except AnswerError:
        return None
    block = clean(block).strip()
    if block.lower() in NONE_WORDS:
        return set()
    if not _NUMBERS.fullmatch(block):
        return None
    return {int(n) for n in re.findall(r"\d+", block)}


def check(puzzle: Puzzle) -> None:
    sequence, thoughts, errors = require(
        puzzle.metadata, NAME, "dyck_sequence", "thoughts", "error_indices"
    )
    if not isinstance(sequence, str) or not sequence:
        raise PuzzleDataError(f"{NAME} metadata 'dyck_sequence' must be a non-empty string")
    if not isinstance(thoughts, list) or not all(isinstance(t, str) for t in thoughts):
        raise PuzzleDataError(f"{NAME} metadata 'thoughts' must be a list of strings")
    if (
        not isinstance(errors, list)
        or any(type(i) is not int or not 1 <= i <= len(thoughts) for i in errors)
        or len(set(errors)) != len(errors)
    ):
        raise PuzzleDataError(
            f"{NAME} metadata 'error_indices' must be distinct thought numbers 1..{len(thoughts)}"
        )


def verify(puzzle: Puzzle, text: str) -> float:
    given = reading(text)
    if given is None:
        return 0.0
    return 1.0 if given == set(puzzle.metadata["error_indices"]) else 0.0
