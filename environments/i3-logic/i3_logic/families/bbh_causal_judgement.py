"""BBH causal judgement and navigate: ``Yes`` or ``No``.

The row's ``answer`` is ``Yes`` or ``No``; the reply states one of them, any case ("So the
answer is No."). Upstream read the text after the first "the answer is" (dropping its last
character, so "the answer is No" at the end of a line did not match) and otherwise the first
yes/no word anywhere in the reply; here exactly one of the two words must be stated.
"""

from __future__ import annotations

from i3_logic.families.bbh_common import choice_answer, require_answer
from i3_logic.puzzle import Puzzle

NAME = "bbh_causal_judgement"
ALIASES = ("bbh_navigate",)
_WORDS = {"yes": "yes", "no": "no"}


def check(puzzle: Puzzle) -> None:
    require_answer(puzzle, puzzle.task, set(_WORDS))


def verify(puzzle: Puzzle, text: str) -> float:
    want = require_answer(puzzle, puzzle.task, set(_WORDS)).lower()
    return 1.0 if choice_answer(text, _WORDS) == want else 0.0
