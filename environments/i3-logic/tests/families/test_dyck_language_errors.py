"""dyck_language_errors: first error recomputed, the answer is one integer, upstream bugs pinned."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from i3_logic import Puzzle, PuzzleDataError, puzzle_from_info, verify
from i3_logic.families import dyck_language_errors

ROWS = Path(__file__).parent.parent / "rows" / "dyck_language_errors.jsonl"
PAIRS = {"(": ")", "[": "]", "{": "}", "<": ">"}


def reduce(seq: str) -> str:
    while True:
        shorter = seq
        for o, c in PAIRS.items():
            shorter = shorter.replace(o + c, "")
        if shorter == seq:
            return seq
        seq = shorter


def solve(seq: str) -> int:
    """The first i whose prefix can no longer be completed (a closer survives reduction), by
    pair deletion rather than a stack; len + 1 when only openers are left; -1 if balanced."""
    for i in range(1, len(seq) + 1):
        if any(ch not in PAIRS for ch in reduce(seq[:i])):
            return i
    return len(seq) + 1 if reduce(seq) else -1


def pz(seq: str, **extra) -> Puzzle:
    return Puzzle("dyck_language_errors", "q", "", 1, {"bracket_string": seq, **extra})


def test_rows_are_answered_by_the_solver():
    for line in ROWS.read_text().splitlines():
        row = json.loads(line)
        p = puzzle_from_info(row["info"])
        want = solve(p.metadata["bracket_string"])
        assert verify(p, str(want)) == 1.0
        assert any(r.rstrip(".").endswith(str(want)) for r in row["_right"])
        assert p.metadata["bracket_string"] in row["question"]


@pytest.mark.parametrize(
    "seq", ["()", "([)]", ")(", "(()", "{[}>", "<[]()>", "[(])", "(((", "]", "<>{}[", "{[()]}}"]
)
def test_recomputed_position_matches_the_solver(seq):
    assert dyck_language_errors.first_error(seq) == solve(seq)
    assert verify(pz(seq), str(solve(seq))) == 1.0


def test_upstream_generator_bug_balanced_string_stored_as_invalid():
    # Upstream stored is_valid false, first_error_pos null, answer "None": no reply could score.
    p = pz("[()]{}", is_valid=False, first_error_pos=None)
    assert verify(p, "-1") == 1.0
    assert verify(p, "None") == 0.0
    assert verify(p, "7") == 0.0


def test_one_kind_mismatch_bug():
    # With one bracket kind upstream's "mismatch" edit turns ")" into "(" and stores that index;
    # the string then first fails at its end.
    p = pz("(()(", is_valid=False, first_error_pos=4)
    assert verify(p, "5") == 1.0
    assert verify(p, "4") == 0.0


P = pz("{[()]<>}(]")  # 10


@pytest.mark.parametrize(
    "reply,score",
    [
        ("10", 1.0),
        (" 10.\n", 1.0),
        ("<answer>10</answer>", 1.0),
        ("\\boxed{10}", 1.0),
        ("The answer is **10**.", 1.0),
        ("9", 0.0),
        ("-1", 0.0),
        # Upstream read -1 anywhere, else the first non-negative integer in the reply.
        ("The first error is at 10, not -1.", 0.0),
        ("Step 1 pushes {, step 2 pushes [ ... so 10", 0.0),
        ("<answer>10 or 11</answer>", 0.0),
        ("<answer>10, 11</answer>", 0.0),
        ("<answer>position 10</answer>", 0.0),
        ("<answer>1e1</answer>", 0.0),
        ("", 0.0),
        ("<answer>" + "1" * 5000 + "</answer>", 0.0),
    ],
)
def test_answer_forms(reply, score):
    assert verify(P, reply) == score


def test_valid_string_wants_minus_one():
    p = pz("<{[]}>()", is_valid=True, first_error_pos=None)
    for reply in ("-1", "\u22121", "<answer>-1</answer>", "The answer is -1."):
        assert verify(p, reply) == 1.0, reply
    for reply in ("1", "9", "0", "valid -1 9"):
        assert verify(p, reply) == 0.0, reply


@pytest.mark.parametrize(
    "meta", [{}, {"bracket_string": ""}, {"bracket_string": "(a)"}, {"bracket_string": 5}]
)
def test_broken_metadata_is_rejected(meta):
    with pytest.raises(PuzzleDataError):
        dyck_language_errors.check(Puzzle("dyck_language_errors", "q", "", 1, meta))
