"""Time sequence (SynLogic): the longest meeting several people can all attend this week.

Each person's weekday schedule (9:00-17:00 local time) is given as busy or free intervals, some
people add a rule (a time-zone offset, no meetings after 16:00, only Tuesdays and Thursdays
with at most an hour, ...). The meeting must start on the hour or half hour. The question asks
for the longest possible duration in minutes and the number of start times that allow it (0 and
0 when none). Metadata is SynLogic's layout: ``n``, ``rule_prob`` and ``records`` with
``raw_schedule``, ``trans_schedule``, ``rules``, ``rules_desc``, ``schedule_withRule`` and
``answers`` = ``{"answer_maxLen", "answer_nums", "answer_record"}``; the row's ``answer`` is
``[answer_maxLen, answer_nums]``. The prompt asks for ``[duration, count]`` at the end of the
reply, e.g. ``[45, 3]``.

The answer is the last ``[...]`` of the reply (unless it has ``<answer>`` tags; without either,
the common answer forms; a line holding two bracketed candidates is a hedge). It must be
exactly two integers equal to ``answer_maxLen`` and ``answer_nums`` (upstream accepted a longer
list that starts with them).
"""

from __future__ import annotations

import re
from typing import Any

from i3_logic.answers import last_bracketed, unbracketed_answer_block
from i3_logic.puzzle import MAX_ANSWER_CHARS, AnswerError, Puzzle, PuzzleDataError, require

NAME = "time_sequence"
ALIASES = ()
_BRACKETS = re.compile(r"\[([^\[\]]*)\]")
# "45, 3" (a Chinese comma too); "45.0" is 45, as upstream's JSON reading has it.
_PAIR = re.compile(r"\s*(\d+)(?:\.0+)?\s*[,\uff0c]\s*(\d+)(?:\.0+)?\s*", re.ASCII)


def expected(puzzle: Puzzle) -> tuple[int, int]:
    """``(answer_maxLen, answer_nums)`` from ``metadata["records"]["answers"]``."""
    (records,) = require(puzzle.metadata, NAME, "records")
    answers: Any = records.get("answers") if isinstance(records, dict) else None
    if not isinstance(answers, dict):
        raise PuzzleDataError(f"{NAME} metadata 'records' lacks an 'answers' object")
    values: list[Any] = [answers.get("answer_maxLen"), answers.get("answer_nums")]
    if any(type(v) is not int or v < 0 for v in values):
        raise PuzzleDataError(
            f"{NAME} metadata records.answers needs non-negative integers answer_maxLen and "
            "answer_nums"
        )
    return values[0], values[1]


def check(puzzle: Puzzle) -> None:
    expected(puzzle)


def _block(text: str) -> str:
    """The content of the last ``[...]`` (the asked form) unless the reply has ``<answer>``
    tags; else the common answer forms, brackets removed."""
    found = last_bracketed(text, _BRACKETS)
    if found is None:
        return unbracketed_answer_block(text, _BRACKETS)
    if len(found) > MAX_ANSWER_CHARS:
        raise AnswerError(f"answer longer than {MAX_ANSWER_CHARS} characters")
    return found  # as written: "[45, 3.]" is not the pair asked for


def verify(puzzle: Puzzle, text: str) -> float:
    want = expected(puzzle)
    m = _PAIR.fullmatch(_block(text))
    if not m:
        return 0.0
    return 1.0 if (int(m.group(1)), int(m.group(2))) == want else 0.0
