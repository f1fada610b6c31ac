"""BBH multi-step arithmetic and object counting: one integer.

The row's ``answer`` is the integer (``-42``, ``7``); the reply states exactly that number
("So the answer is -42.", or in ``<answer>``/``\\boxed{}``; a Unicode minus and thousands
commas are read). Upstream took the first number after the first "the answer is" and, failing
that, the first number anywhere in the reply (so the first intermediate result counted); here
the stated answer must be one integer and nothing else.
"""

from __future__ import annotations

from i3_logic.families.bbh_common import integer, parsed_reference, stated_answer
from i3_logic.puzzle import Puzzle

NAME = "bbh_multistep_arithmetic_two"
ALIASES = ("bbh_object_counting",)


def _reference(puzzle: Puzzle) -> int:
    return parsed_reference(puzzle, integer, "an integer")


def check(puzzle: Puzzle) -> None:
    _reference(puzzle)


def verify(puzzle: Puzzle, text: str) -> float:
    want = _reference(puzzle)
    given = integer(stated_answer(text))
    return 1.0 if given is not None and given == want else 0.0
