"""BBH Dyck languages: completions recomputed with a stack, answer forms, hedges."""

from __future__ import annotations

from i3_logic.families import bbh_dyck_languages as family
from i3_logic_testkit import broken_answers_test, real_puzzles, replies_test

PUZZLES = real_puzzles(family.NAME)
CLOSE = {"(": ")", "[": "]", "{": "}", "<": ">"}


def completion(sequence: str) -> str:
    stack: list[str] = []
    for ch in sequence.split():
        if ch in CLOSE:
            stack.append(ch)
        else:
            assert CLOSE[stack.pop()] == ch  # the prefix itself is well nested
    return " ".join(CLOSE[o] for o in reversed(stack))


def test_rows_are_right():
    for p in PUZZLES:
        prefix = p.question.split("Input: ")[1].split("\n")[0]
        assert p.answer == completion(prefix)


P = PUZZLES[0]  # Input: [ { ( < > )  ->  } ]


test_answer_forms = replies_test(
    P,
    [
        ("So the answer is } ].", 1.0),
        ("So the answer is } ]", 1.0),  # upstream dropped the last character without a period
        ("So the answer is }].", 1.0),
        ("<answer>\\} ]</answer>", 1.0),
        ("So the answer is [ { ( < > ) } ].", 1.0),  # the whole completed sequence
        ("So the answer is ] }.", 0.0),
        ("So the answer is } ] ).", 0.0),
        ("So the answer is } ] or ] }.", 0.0),
        ("So the answer is { ( < > ) } ].", 0.0),  # a partial prefix is not the sequence
        ("} ]", 0.0),  # no statement: upstream compared the whole reply
        ("", 0.0),
    ],
)


test_check_rejects_rows_without_brackets = broken_answers_test(
    family.check, family.NAME, ["", "close them", "} ] x"], question=P.question
)
