"""GPQA diamond: the boxed option letter, references as C or (C), hedges rejected."""

from __future__ import annotations

import pytest
from i3_logic import Puzzle, verify
from i3_logic.families import gpqa_diamond as family
from i3_logic.puzzle import PuzzleDataError
from i3_logic_testkit import real_puzzles, verdicts_test

PUZZLES = real_puzzles(family.NAME)
CARBON, SPIN = PUZZLES  # references "A" and "(C)"


def test_rows_are_right():
    # Carbon 2p2: S = 1, L = 1, less than half filled so J = |L - S| = 0 -> 3P0 = option A.
    assert CARBON.answer == "A" and "(A) 3P0" in CARBON.question
    # |<+x|+z>|^2 = 1/2 -> option C.
    assert SPIN.answer == "(C)" and "(C) 1/2" in SPIN.question


test_answer_forms = verdicts_test(
    [
        (CARBON, "Hund's rules give 3P0. \\boxed{A}", 1.0),
        (CARBON, "\\boxed{(A)}", 1.0),
        (CARBON, "$\\boxed{\\text{A}}$", 1.0),  # upstream stopped at the first }: 0
        (CARBON, "\\boxed{A) 3P0}", 1.0),
        (CARBON, "\\boxed{(A) 3P2}", 0.0),  # letter A with option C's text
        (CARBON, "\\boxed{C}", 0.0),
        (CARBON, "\\boxed{A or C}", 0.0),
        (CARBON, "\\boxed{A, C}", 0.0),
        (CARBON, "\\boxed{A} at first, then \\boxed{C}", 0.0),
        (CARBON, "I believe A is right.", 0.0),
        (SPIN, "\\boxed{C}", 1.0),
        (SPIN, "\\boxed{c}", 1.0),
        (SPIN, "\\boxed{(B)}", 0.0),
        (SPIN, "", 0.0),
    ]
)


def test_a_text_reference_is_compared_as_text():
    p = Puzzle(family.NAME, "What is 1/2 as a decimal?", "0.5", 1, {})
    assert verify(p, "\\boxed{0.50}") == 1.0
    assert verify(p, "\\boxed{0.25}") == 0.0


def test_check_rejects_rows_without_an_answer():
    with pytest.raises(PuzzleDataError):
        family.check(Puzzle(family.NAME, CARBON.question, "", 1, {}))
