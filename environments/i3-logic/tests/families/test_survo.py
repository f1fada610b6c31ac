"""Survo: the rows' filled matrices re-checked; candidates used as a multiset."""

from __future__ import annotations

from collections import Counter

import pytest
from i3_logic import Puzzle, puzzle_from_info, verify
from i3_logic.families import survo as family
from i3_logic_testkit import broken_metadata_test, real_rows, wrong_replies_test

ROWS = real_rows(family.NAME)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["question"][:30])
def test_row_filled_matrix_sums_and_uses_the_candidates(row):
    m = puzzle_from_info(row["info"]).metadata
    full, orig = m["filled_matrix"], m["original_matrix"]
    n = m["n"]
    assert all(sum(full[r][: n - 1]) == full[r][n - 1] for r in range(n))
    assert all(sum(full[r][c] for r in range(n - 1)) == full[n - 1][c] for c in range(n))
    blanks = [full[r][c] for r in range(n) for c in range(n) if orig[r][c] == 0]
    assert Counter(blanks) == Counter(m["candidate_numbers"])
    assert all(orig[r][c] in (0, full[r][c]) for r in range(n) for c in range(n))


ORIG = [[0, 2, 5], [4, 0, 9], [7, 7, 14]]
P = Puzzle(family.NAME, "q", "", 1, {"original_matrix": ORIG, "candidate_numbers": [3, 5], "n": 3})
FULL = [[3, 2, 5], [4, 5, 9], [7, 7, 14]]


def test_forms():
    assert verify(P, f"Row 1 needs 3.\n```python\n{FULL}\n```") == 1.0
    assert verify(P, f"Filled:\n{FULL}") == 1.0


test_bad_replies_score_zero = wrong_replies_test(
    P,
    [
        "",
        "```python\n[[5, 2, 5], [4, 3, 9], [7, 7, 14]]\n```",  # sums break
        "```python\n[[3, 2, 5], [4, 5, 9], [7, 7, 15]]\n```",  # a given changed
        f"```python\n{FULL}\nor\n{FULL}\n```",
        "```python\n[[3, 2], [4, 5]]\n```",
    ],
)


def test_candidates_must_be_the_numbers_used():
    p = Puzzle(family.NAME, "q", "", 1, {"original_matrix": ORIG, "candidate_numbers": [4, 4]})
    assert verify(p, f"```python\n{FULL}\n```") == 0.0  # sums hold, but 3 and 5 are not 4, 4


test_check_rejects_broken_metadata = broken_metadata_test(
    family.check,
    family.NAME,
    [
        {"original_matrix": ORIG},
        {"original_matrix": ORIG, "candidate_numbers": [3]},
        {"original_matrix": [[0, 2], [4]], "candidate_numbers": [3]},
    ],
)
