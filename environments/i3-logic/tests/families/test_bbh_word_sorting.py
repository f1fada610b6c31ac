"""BBH word sorting: the rows sorted by Python, list forms read, extra words rejected."""

from __future__ import annotations

import pytest
from i3_logic import Puzzle, verify
from i3_logic.families import bbh_word_sorting as family
from i3_logic.puzzle import PuzzleDataError
from i3_logic_testkit import real_puzzles, replies_test

PUZZLES = real_puzzles(family.NAME)


def test_rows_are_right():
    for p in PUZZLES:
        words = p.question.split("List: ")[1].split("\n")[0].split()
        assert p.answer == " ".join(sorted(words))


P = PUZZLES[0]  # apple banana kiwi mango pepper


test_answer_forms = replies_test(
    P,
    [
        ("So the answer is apple banana kiwi mango pepper.", 1.0),
        ("So the answer is Apple, Banana, Kiwi, Mango, Pepper.", 1.0),
        ("<answer>['apple', 'banana', 'kiwi', 'mango', 'pepper']</answer>", 1.0),
        ("So the answer is apple banana kiwi pepper mango.", 0.0),
        ("So the answer is apple banana kiwi mango.", 0.0),
        ("So the answer is apple banana kiwi mango pepper pepper.", 0.0),
        ("So the answer is apple banana kiwi mango pepper or apple banana mango kiwi pepper.", 0.0),
        # No statement: upstream collected the listed words from the prose ("...") and scored 1.
        ("First apple, then banana, kiwi, mango and pepper.", 0.0),
        ("", 0.0),
    ],
)


def test_prompt_without_a_list_line_still_verifies():
    # Upstream scored every reply 0 when the prompt lacked "List:"; the reference decides here.
    p = Puzzle(family.NAME, "Sort: kiwi apple", "apple kiwi", 1, {})
    assert verify(p, "So the answer is apple kiwi.") == 1.0


def test_check_rejects_rows_without_an_answer():
    with pytest.raises(PuzzleDataError):
        family.check(Puzzle(family.NAME, P.question, "  ", 1, {}))
