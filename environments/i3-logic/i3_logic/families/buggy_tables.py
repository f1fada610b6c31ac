"""Buggy tables: a table mangled by a described conversion bug; compute a filtered statistic.

SynLogic's layout: the prompt shows a table of daily-activity columns (``num_steps``,
``sleep_minutes``, ...) that a buggy converter damaged (cells replaced by ``ERROR`` with their
values listed, pairs of rows merged with `` && ``, columns or rows rotated, an extra row or
column, nulls), and asks for the absolute difference between a statistic (mean, median,
stdev, sum, max, min, variance) of two columns over rows meeting some conditions, "with
exactly 2 decimal places". The game data's ``answer`` is that number (``"12.34"``); metadata
keeps ``num_rows``, ``major_type``, ``bug_type``, ``bug_rate``, ``queries``, ``buggy_table``,
``bug_description``, ``target_answer`` (the same string), ``original_table`` (row objects) and
``query_result`` (``query``, ``result``, ``filtered_rows``, ``total_rows``, ``conditions``,
``columns_compared``, ``statistic``).

The prompt names no answer wrapper, so the answer is the final answer block when there is one
(``\\boxed{}``, ``<answer>`` tags, "The answer is ..."), else the reply's last line holding a
digit. Its last number must have exactly two decimals (``1,234.50`` read with its separators)
and equal the stored value; a line that hedges ("about", "approximately", "or", ``≈``) is not
an answer. Upstream took the last two-decimal number anywhere in the reply (so ``1,234.50`` read
as ``234.50``) and used the whole reply when there was none.

Upstream's loader skips this task by default (``tasks_to_skip``); it is verified here so
``tasks_to_skip=[]`` serves it.
"""

from __future__ import annotations

import re
from decimal import Decimal

from i3_logic.puzzle import MAX_ANSWER_CHARS, Puzzle, PuzzleDataError, final_answer

NAME = "buggy_tables"
ALIASES = ()
# A number as written: optional sign, digits (optionally in thousands groups), decimals.
_NUMBER = re.compile(r"(?<![\w.])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?!\w|[.,]\d)", re.ASCII)
_TWO_DECIMALS = re.compile(r"-?[\d,]+\.\d{2}", re.ASCII)
_DIGIT = re.compile(r"\d", re.ASCII)
_HEDGE = re.compile(
    r"\b(?:about|around|approximately|approx|roughly|maybe|perhaps|possibly|might|or)\b|[≈~约或]",
    re.IGNORECASE,
)


def stored_value(puzzle: Puzzle) -> Decimal:
    answer = str(puzzle.answer).strip()
    if not _TWO_DECIMALS.fullmatch(answer):
        raise PuzzleDataError(f"{NAME} answer must have two decimals, got {puzzle.answer!r}")
    target = puzzle.metadata.get("target_answer")
    if target is not None and str(target).strip() != answer:
        raise PuzzleDataError(f"{NAME} metadata 'target_answer' disagrees with the answer")
    return Decimal(answer.replace(",", ""))


def check(puzzle: Puzzle) -> None:
    stored_value(puzzle)


def answer_line(text: str) -> str:
    """The final answer block, or else the reply's last line that holds a digit (a closing
    pleasantry after the answer line is skipped; an earlier result is not reached past it)."""
    block = final_answer(text)
    if block:
        return block
    lines = [line.strip() for line in (text or "").splitlines() if _DIGIT.search(line)]
    return lines[-1] if lines else ""


def read_value(text: str) -> Decimal | None:
    line = answer_line(text)
    if not line or len(line) > MAX_ANSWER_CHARS or _HEDGE.search(line):
        return None
    numbers = _NUMBER.findall(line)
    if not numbers or not _TWO_DECIMALS.fullmatch(numbers[-1]):
        return None
    return Decimal(numbers[-1].replace(",", ""))


def verify(puzzle: Puzzle, text: str) -> float:
    truth = stored_value(puzzle)
    return 1.0 if read_value(text) == truth else 0.0
