"""BBH causal judgement and navigate: yes/no rows, the navigate walk re-simulated."""

from __future__ import annotations

import re

from i3_logic import TASKS
from i3_logic.families import bbh_causal_judgement as family
from i3_logic_testkit import broken_answers_test, real_puzzles, replies_test

PUZZLES = {p.task: p for p in real_puzzles(family.NAME)}


def test_both_keys_have_rows_and_share_the_verifier():
    assert set(PUZZLES) == {"bbh_causal_judgement", "bbh_navigate"}
    assert TASKS["bbh_navigate"].name == family.NAME


def test_navigate_row_is_right():
    p = PUZZLES["bbh_navigate"]
    step = {"forward": (0, 1), "backward": (0, -1), "left": (-1, 0), "right": (1, 0)}
    x = y = 0
    for count, way in re.findall(r"Take (\d+) steps? (forward|backward|left|right)", p.question):
        x += int(count) * step[way][0]
        y += int(count) * step[way][1]
    assert p.answer == ("Yes" if (x, y) == (0, 0) else "No")


P = PUZZLES["bbh_navigate"]  # Yes


test_answer_forms = replies_test(
    P,
    [
        ("So the answer is Yes.", 1.0),
        ("So the answer is yes", 1.0),  # upstream dropped the last character here: "ye"
        ("The answer is:\n**Yes**", 1.0),
        ("So the answer is No.", 0.0),
        ("So the answer is Yes or No.", 0.0),
        ("So the answer is Yes, probably.", 0.0),
        ("No idea... yes.", 0.0),  # no statement: upstream took the first yes/no word ("No")
        ("", 0.0),
    ],
)


test_check_rejects_rows_without_yes_or_no = broken_answers_test(
    family.check, "bbh_navigate", ["", "True", "maybe"], question=P.question
)
