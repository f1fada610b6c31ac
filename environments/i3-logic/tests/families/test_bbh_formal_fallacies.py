"""BBH formal fallacies: valid/invalid rows (the valid one checked over all small models)."""

from __future__ import annotations

import itertools

from i3_logic.families import bbh_formal_fallacies as family
from i3_logic_testkit import broken_answers_test, real_puzzles, replies_test

PUZZLES = real_puzzles(family.NAME)


def models(n: int = 3):
    """Every assignment of three predicates over a domain of ``n`` individuals."""
    cells = list(itertools.product([False, True], repeat=3 * n))
    for bits in cells:
        yield [bits[i * 3 : i * 3 + 3] for i in range(n)]


def test_rows_are_right():
    # Row 0: all A are B, all B are C |= all A are C. Row 1: some A are B, some B are C does
    # not entail some A are C. Decided over every model with three individuals.
    chain = all(
        not (all(b for a, b, _ in m if a) and all(c for _, b, c in m if b))
        or all(c for a, _, c in m if a)
        for m in models()
    )
    some = all(
        not (any(a and b for a, b, _ in m) and any(b and c for _, b, c in m))
        or any(a and c for a, _, c in m)
        for m in models()
    )
    assert (PUZZLES[0].answer, PUZZLES[1].answer) == (
        "valid" if chain else "invalid",
        "valid" if some else "invalid",
    )


P = PUZZLES[1]  # invalid


test_answer_forms = replies_test(
    P,
    [
        ("So the answer is invalid.", 1.0),
        ("So the answer is INVALID", 1.0),
        ("So the answer is valid.", 0.0),
        ("So the answer is invalid or valid.", 0.0),
        ("Step one is valid, the argument invalid.", 0.0),  # upstream: first word, "valid"
        ("", 0.0),
    ],
)


test_check_rejects_other_answers = broken_answers_test(
    family.check, family.NAME, ["", "Yes", "not valid"], question=P.question
)
