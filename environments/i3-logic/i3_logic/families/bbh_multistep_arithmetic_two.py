"""BBH multi-step arithmetic and object counting: one integer.

The row's ``answer`` is the integer (``-42``, ``7``); the reply states exactly that number
("So the answer is -42.", or in ``<answer>``/``\\boxed{}``; a Unicode minus and thousands
commas are read). Upstream took the first number after the first "the answer is" and, failing
that, the first number anywhere in the reply (so the first intermediate result counted); here
the stated answer must be one integer and nothing else.
"""

from __future__ import annotations

from i3_logic.families.bbh_common import StatedAnswer, integer
from i3_logic.puzzle import Puzzle

NAME = "bbh_multistep_arithmetic_two"
ALIASES = ("bbh_object_counting",)


def _matches(puzzle: Puzzle, want: int, block: str) -> bool:
    return integer(block) == want


_TASK = StatedAnswer(integer, "an integer", _matches)
check = _TASK.check
verify = _TASK.verify
