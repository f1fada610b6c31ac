"""GPQA diamond: graduate-level science multiple choice; the option letter in ``\\boxed{}``.

The row's ``answer`` is the correct option's letter (``C`` or ``(C)``). The prompt asks for the
letter in ``\\boxed{}``; the final answer block (the last ``<answer>``, else the last
``\\boxed{}``, ...; see ``i3_logic.puzzle.final_answer``) must name exactly one option: ``C``,
``(C)``, ``\\boxed{\\text{C}}``, or the letter followed by that option's own text from the
prompt. A reference that is not a letter is compared as text (case and spacing ignored, numbers
by value), as upstream's fuzzy match did. Upstream read only ``\\boxed{...}`` up to the first
``}`` (so ``\\boxed{\\text{C}}`` scored 0).
"""

from __future__ import annotations

import re

from i3_logic.answers import answer_block, clean, finite_number
from i3_logic.families.bbh_common import option_letter, require_answer
from i3_logic.puzzle import Puzzle

NAME = "gpqa_diamond"
ALIASES = ()
_REFERENCE_LETTER = re.compile(r"\(?([A-Za-z])\)?")


def check(puzzle: Puzzle) -> None:
    require_answer(puzzle, NAME)


def same_text(given: str, want: str) -> bool:
    """Case- and spacing-insensitive equality, numbers by value."""
    a, b = (" ".join(clean(s).lower().split()) for s in (given, want))
    if a == b:
        return True
    x, y = finite_number(a), finite_number(b)
    return x is not None and x == y


def verify(puzzle: Puzzle, text: str) -> float:
    want = require_answer(puzzle, NAME)
    block = answer_block(text)
    letter = _REFERENCE_LETTER.fullmatch(want)
    if letter:
        return 1.0 if option_letter(block, puzzle.question) == letter.group(1).upper() else 0.0
    return 1.0 if same_text(block, want) else 0.0
