"""Object counting: a story of who owns how many of what; count some of the narrator's things.

SynLogic's layout: the prompt tells, item by item, what the narrator ("I") and relatives own
(with distracting asides) and asks for the total of one or two of the narrator's categories,
or the absolute difference of two; the answer goes in ``\\boxed{}``. The game data's
``answer`` is that number as a string; ``metadata`` keeps ``possessions`` (person -> category
-> ``[item, count, description]`` lists), ``used_categories`` and ``language`` (the question
type is not stored, so the verifier reads ``answer``).

The reply's final answer block must be exactly that integer (``1,234`` thousands separators
and the usual wrappers such as ``\\text{}`` read through). Upstream took the last ``\\boxed{}``
only and cut it at the first ``}`` (so ``\\boxed{\\text{12}}`` failed); ``12.0`` or ``12
apples`` are not an integer answer, as upstream.
"""

from __future__ import annotations

import re

from i3_logic.answers import answer_block
from i3_logic.puzzle import AnswerError, Puzzle, PuzzleDataError

NAME = "object_counting"
ALIASES = ()
_INT = re.compile(r"[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)", re.ASCII)
_MAX_DIGITS = 18


def read_int(block: str) -> int | None:
    """The integer a cleaned answer block consists of, or None."""
    text = block.strip()
    if not _INT.fullmatch(text) or len(text) > _MAX_DIGITS + 6:
        return None
    return int(text.replace(",", ""))


def stored_int(puzzle: Puzzle, task: str) -> int:
    """The stored answer as an integer; ``PuzzleDataError`` when it is not one."""
    value = read_int(str(puzzle.answer))
    if value is None:
        raise PuzzleDataError(f"{task} answer must be an integer, got {puzzle.answer!r}")
    return value


def score_int(puzzle: Puzzle, text: str, task: str) -> float:
    truth = stored_int(puzzle, task)
    try:
        given = read_int(answer_block(text))
    except AnswerError:
        return 0.0
    return 1.0 if given == truth else 0.0


def check(puzzle: Puzzle) -> None:
    stored_int(puzzle, NAME)
    possessions = puzzle.metadata.get("possessions")
    if possessions is not None and not isinstance(possessions, dict):
        raise PuzzleDataError(f"{NAME} metadata 'possessions' must be an object")


def verify(puzzle: Puzzle, text: str) -> float:
    return score_int(puzzle, text, NAME)
