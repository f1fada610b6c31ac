"""dyck_language_reasoning_errors: rows re-derived by a stack simulation, answer forms, bugs."""

from __future__ import annotations

from i3_logic import Puzzle, puzzle_from_info
from i3_logic.families import dyck_language_reasoning_errors as family
from i3_logic_testkit import changed, real_rows, rejected_test, verdicts_test

OPENERS = {"(": ")", "[": "]", "{": "}", "<": ">"}


def wrong_thoughts(sequence: str, thoughts: list[str]) -> set[int]:
    """Numbers of the thoughts whose stated stack (or conclusion) is not the real one."""
    body = [t.split(": ", 1)[1] for t in thoughts]
    assert len(body) == len(sequence) + 3
    wrong = set() if body[1] == "Stack: empty" else {2}
    real: list[str] = []
    for i, ch in enumerate(sequence):
        if ch in OPENERS:
            real.append(ch)
        else:
            assert real and OPENERS[real.pop()] == ch, "the sequence is not balanced"
        bracket, _, stated = body[2 + i].partition(" ; Stack: ")
        if bracket != ch or stated != ("".join(real) or "empty"):
            wrong.add(3 + i)
    if body[-1].endswith("is empty.") == bool(real):
        wrong.add(len(thoughts))
    return wrong


def test_rows_error_indices_are_the_wrong_thoughts():
    for row in real_rows("dyck_language_reasoning_errors"):
        p = puzzle_from_info(row["info"])
        m = p.metadata
        assert set(m["error_indices"]) == wrong_thoughts(m["dyck_sequence"], m["thoughts"])
        assert m["n_errors"] == len(m["error_indices"])
        assert all(t in row["question"] for t in m["thoughts"])


def pz(errors: list[int], n: int = 10) -> Puzzle:
    thoughts = [f"Thought {i}: ..." for i in range(1, n + 1)]
    meta = {"dyck_sequence": "()()", "thoughts": thoughts, "error_indices": errors}
    return Puzzle(family.NAME, "q", ",".join(map(str, errors)), 1, meta)


TWO = pz([5, 8])
NONE = pz([])


test_answer_forms = verdicts_test(
    [
        (TWO, "5,8", 1.0),
        (TWO, "8, 5", 1.0),  # a set, as upstream
        (TWO, "5，8", 1.0),
        (TWO, '"5,8"', 1.0),
        (TWO, "<answer>[5, 8]</answer>", 1.0),
        (TWO, "\\boxed{5,8}", 1.0),
        (TWO, "5", 0.0),
        (TWO, "5,8,9", 0.0),
        (TWO, "<answer>5 or 8</answer>", 0.0),
        (TWO, "Thoughts 5 and 8 are wrong.", 0.0),  # upstream kept the digits: "58"
        (TWO, '""', 0.0),
        (TWO, "", 0.0),
        (TWO, "<answer>" + "5," * 3000 + "8</answer>", 0.0),
        (NONE, '""', 1.0),
        (NONE, "<answer></answer>", 1.0),
        (NONE, "\\boxed{}", 1.0),
        (NONE, "No errors", 1.0),
        (NONE, "<answer>none</answer>", 1.0),
        (NONE, "3", 0.0),
        # Upstream deleted every non-digit: any reply without digits, even an empty one, was
        # "no errors" and scored 1.
        (NONE, "", 0.0),
        (NONE, "I checked every step carefully.", 0.0),
        (NONE, "<answer>maybe</answer>", 0.0),
    ]
)


test_broken_metadata_is_rejected = rejected_test(
    family.check,
    changed(
        TWO,
        [
            {"error_indices": [0]},
            {"error_indices": [11]},  # beyond the last thought
            {"error_indices": [3, 3]},
            {"error_indices": "3"},
            {"error_indices": [True]},
            {"thoughts": "Thought 1: ..."},
            {"dyck_sequence": ""},
        ],
    ),
)


def test_the_good_rows_pass_check():
    family.check(TWO)
