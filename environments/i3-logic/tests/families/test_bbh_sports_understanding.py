"""BBH sports understanding: plausible yes/no, answered as yes/no or (not) plausible."""

from __future__ import annotations

from i3_logic.families import bbh_sports_understanding as family
from i3_logic_testkit import broken_answers_test, real_puzzles, verdicts_test

PUZZLES = real_puzzles(family.NAME)
YES, NO = PUZZLES


def test_rows_have_both_answers():
    assert (YES.answer, NO.answer) == ("yes", "no")


test_answer_forms = verdicts_test(
    [
        (YES, "So the answer is yes.", 1.0),
        (YES, "So the answer is Plausible.", 1.0),
        (YES, "So the answer is not plausible.", 0.0),
        (YES, "No doubt about it. So the answer is yes.", 1.0),  # upstream: "no" came first
        (NO, "So the answer is implausible.", 1.0),
        (NO, "So the answer is no.", 1.0),
        (NO, "So the answer is plausible or not plausible.", 0.0),
        (NO, "Not plausible at all.", 0.0),  # no statement
        (NO, "", 0.0),
    ]
)


test_check_rejects_other_answers = broken_answers_test(
    family.check, family.NAME, ["", "plausible", "True"], question=YES.question
)
