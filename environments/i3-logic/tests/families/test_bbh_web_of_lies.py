"""BBH web of lies: the chain solved by brute force, yes/no and restatements read."""

from __future__ import annotations

import itertools
import re

from i3_logic.families import bbh_web_of_lies as family
from i3_logic_testkit import broken_answers_test, real_puzzles, verdicts_test

PUZZLES = real_puzzles(family.NAME)


def solve(question: str) -> bool:
    """The asked person's honesty, over every assignment consistent with the statements."""
    (first, first_honest), *_ = re.findall(r"(\w+) (tells the truth|lies)\. ", question)
    says = re.findall(r"(\w+) says (\w+) (tells the truth|lies)", question)
    asked = re.findall(r"Does (\w+) tell the truth\?", question)[-1]
    people = [first] + [s for s, _, _ in says]
    found = set()
    for values in itertools.product([False, True], repeat=len(people)):
        honest = dict(zip(people, values, strict=True))
        if honest[first] != (first_honest == "tells the truth"):
            continue
        if all(honest[s] == (honest[t] == (w == "tells the truth")) for s, t, w in says):
            found.add(honest[asked])
    assert len(found) == 1
    return found.pop()


def test_rows_are_right():
    for p in PUZZLES:
        assert p.answer == ("Yes" if solve(p.question) else "No")


YES, NO = PUZZLES  # Dora tells the truth; Ivo lies


test_answer_forms = verdicts_test(
    [
        (YES, "So the answer is Yes.", 1.0),
        (YES, "So the answer is yes, Dora tells the truth.", 1.0),
        (YES, "So the answer is: Dora tells the truth.", 1.0),
        (YES, "So the answer is Yes, Cyril tells the truth.", 0.0),  # about someone else
        (YES, "So the answer is Yes, Dora lies.", 0.0),  # contradicts itself
        (NO, "So the answer is No, Ivo lies.", 1.0),
        (NO, "So the answer is Ivo does not tell the truth.", 1.0),
        (NO, "So the answer is Yes.", 0.0),
        (NO, "So the answer is yes or no.", 0.0),
        (YES, "No one lies here except Amos. So the answer is yes.", 1.0),  # upstream: "no"
        (YES, "", 0.0),
    ]
)


test_check_rejects_rows_without_yes_or_no = broken_answers_test(
    family.check, family.NAME, ["", "True", "Dora"], question=YES.question
)
