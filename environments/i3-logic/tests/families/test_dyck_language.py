"""dyck_language and dyck_language_errors in SynLogic's layout: rows checked by a solver (one
independent pair-deletion oracle for both), answer forms, broken rows, upstream bugs pinned."""

from __future__ import annotations

import pytest
from i3_logic import Puzzle, generate, puzzle_from_info, verify
from i3_logic.families import dyck_language, dyck_language_errors
from i3_logic_testkit import broken_metadata_test, real_rows, replies_test

PAIRS = {"(": ")", "[": "]", "{": "}", "<": ">"}
UPSTREAM_KEYS = {
    "trace_id",
    "full_sequence",
    "question_sequence",
    "n_types",
    "total_length",
    "fill_length",
    "nesting_depth",
}


def reduce(seq: str) -> str:
    """Delete adjacent matched pairs until none is left (not the package's stack method)."""
    while True:
        shorter = seq
        for o, c in PAIRS.items():
            shorter = shorter.replace(o + c, "")
        if shorter == seq:
            return seq
        seq = shorter


def solve(prefix: str) -> str:
    """The unique shortest completion: the unmatched openers, closed innermost first."""
    rest = reduce(prefix)
    assert rest and all(ch in PAIRS for ch in rest), "not an open prefix"
    return prefix + "".join(PAIRS[ch] for ch in reversed(rest))


def pz(prefix: str, full: str | None = None) -> Puzzle:
    full = solve(prefix) if full is None else full
    meta = {"question_sequence": prefix, "full_sequence": full, "n_types": 4}
    return Puzzle("dyck_language", "q", full, 1, meta)


def test_rows_hold_the_solved_sequence():
    for row in real_rows("dyck_language"):
        p = puzzle_from_info(row["info"])
        meta = p.metadata
        assert meta["full_sequence"] == solve(meta["question_sequence"]) == p.answer
        assert meta["question_sequence"] in row["question"]
        assert meta["fill_length"] == len(meta["full_sequence"]) - len(meta["question_sequence"])


@pytest.mark.parametrize("level", [1, 2, 3])
def test_generated_puzzles_use_the_synlogic_layout(level):
    for index in range(3):
        p = generate("dyck_language", 4, level, index)
        assert set(p.metadata) == UPSTREAM_KEYS
        full, prefix = p.metadata["full_sequence"], p.metadata["question_sequence"]
        assert full == solve(prefix) == p.answer and " " not in full
        assert verify(p, f"<answer>{full}</answer>") == 1.0
        assert verify(p, full) == 1.0  # the bare reply the real prompts ask for
        assert verify(p, f"<answer>{full[len(prefix) :]}</answer>") == 1.0
        assert verify(p, f"<answer>{full}()</answer>") == 0.0
        assert verify(p, f"<answer>{prefix}</answer>") == 0.0


P = pz("([{}](<")  # -> ([{}](<>))


test_answer_forms = replies_test(
    P,
    [
        ("([{}](<>))", 1.0),
        ("  ( [ { } ] ( < > ) )\n", 1.0),
        ("`([{}](<>))`", 1.0),
        ("<answer>> ) )</answer>", 1.0),  # only the brackets to append
        ("The answer is ([{}](<>)).", 1.0),
        ("([{}](<>)]", 0.0),
        ("([{}](<>))()", 0.0),  # balanced, not the shortest
        ("([{}](<", 0.0),
        ("", 0.0),
        ("The completed sequence is ([{}](<>))", 0.0),  # prose, no answer block
        ("I would write:\n([{}](<>))", 0.0),
        ("<answer>([{}](<>)) or ([{}](<)>))</answer>", 0.0),
        ("<answer>([{}](<>)), ([{}](<>))</answer>", 0.0),
        ("(" * 5000, 0.0),
        ("<answer>" + "(" * 5000 + "</answer>", 0.0),
    ],
)


test_broken_metadata_is_rejected = broken_metadata_test(
    dyck_language.check,
    "dyck_language",
    [
        {"question_sequence": "(["},  # no full_sequence
        {"full_sequence": "([])"},
        {"question_sequence": "([", "full_sequence": "([])()"},  # not the shortest
        {"question_sequence": "([", "full_sequence": "([)]"},
        {"question_sequence": "()", "full_sequence": "()"},  # nothing to close
        {"question_sequence": "(a", "full_sequence": "(a)"},
        {"question_sequence": 3, "full_sequence": "()"},
    ],
)


# -- dyck_language_errors: first error recomputed, the answer is one integer ----------------
def first_error_of(seq: str) -> int:
    """The first i whose prefix can no longer be completed (a closer survives reduction), by
    pair deletion rather than a stack; len + 1 when only openers are left; -1 if balanced."""
    for i in range(1, len(seq) + 1):
        if any(ch not in PAIRS for ch in reduce(seq[:i])):
            return i
    return len(seq) + 1 if reduce(seq) else -1


def error_pz(seq: str, **extra) -> Puzzle:
    return Puzzle("dyck_language_errors", "q", "", 1, {"bracket_string": seq, **extra})


def test_errors_rows_are_answered_by_the_solver():
    for row in real_rows("dyck_language_errors"):
        p = puzzle_from_info(row["info"])
        want = first_error_of(p.metadata["bracket_string"])
        assert verify(p, str(want)) == 1.0
        assert any(r.rstrip(".").endswith(str(want)) for r in row["_right"])
        assert p.metadata["bracket_string"] in row["question"]


@pytest.mark.parametrize(
    "seq", ["()", "([)]", ")(", "(()", "{[}>", "<[]()>", "[(])", "(((", "]", "<>{}[", "{[()]}}"]
)
def test_recomputed_position_matches_the_solver(seq):
    assert dyck_language_errors.first_error(seq) == first_error_of(seq)
    assert verify(error_pz(seq), str(first_error_of(seq))) == 1.0


def test_upstream_generator_bug_balanced_string_stored_as_invalid():
    # Upstream stored is_valid false, first_error_pos null, answer "None": no reply could score.
    p = error_pz("[()]{}", is_valid=False, first_error_pos=None)
    assert verify(p, "-1") == 1.0
    assert verify(p, "None") == 0.0
    assert verify(p, "7") == 0.0


def test_one_kind_mismatch_bug():
    # With one bracket kind upstream's "mismatch" edit turns ")" into "(" and stores that index;
    # the string then first fails at its end.
    p = error_pz("(()(", is_valid=False, first_error_pos=4)
    assert verify(p, "5") == 1.0
    assert verify(p, "4") == 0.0


ERROR_P = error_pz("{[()]<>}(]")  # 10


test_errors_answer_forms = replies_test(
    ERROR_P,
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


def test_valid_string_wants_minus_one():
    p = error_pz("<{[]}>()", is_valid=True, first_error_pos=None)
    for reply in ("-1", "\u22121", "<answer>-1</answer>", "The answer is -1."):
        assert verify(p, reply) == 1.0, reply
    for reply in ("1", "9", "0", "valid -1 9"):
        assert verify(p, reply) == 0.0, reply


test_errors_broken_metadata_is_rejected = broken_metadata_test(
    dyck_language_errors.check,
    "dyck_language_errors",
    [{}, {"bracket_string": ""}, {"bracket_string": "(a)"}, {"bracket_string": 5}],
)
