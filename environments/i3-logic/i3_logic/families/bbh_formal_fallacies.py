"""BBH formal fallacies: is the argument deductively ``valid`` or ``invalid``?

The row's ``answer`` is ``valid`` or ``invalid``; the reply states one of them, any case.
Upstream fell back to the first valid/invalid word anywhere in the reply ("this step is valid,
... the argument is invalid" scored as valid); here exactly one of the two words is stated.
"""

from __future__ import annotations

from i3_logic.families.bbh_common import choice_answer, require_answer
from i3_logic.puzzle import Puzzle

NAME = "bbh_formal_fallacies"
ALIASES = ()
_WORDS = {"valid": "valid", "invalid": "invalid"}


def check(puzzle: Puzzle) -> None:
    require_answer(puzzle, puzzle.task, set(_WORDS))


def verify(puzzle: Puzzle, text: str) -> float:
    want = require_answer(puzzle, puzzle.task, set(_WORDS)).lower()
    return 1.0 if choice_answer(text, _WORDS) == want else 0.0
