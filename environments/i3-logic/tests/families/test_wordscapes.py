"""Wordscapes: the rows' solutions hold their words; a word may not span an empty cell."""

from __future__ import annotations

import pytest
from i3_logic import Puzzle, puzzle_from_info, verify
from i3_logic.families import wordscapes as family
from i3_logic_testkit import broken_metadata_test, real_rows, wrong_replies_test

ROWS = real_rows(family.NAME)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["question"][:30])
def test_row_solution_spells_every_word_in_its_slot(row):
    m = puzzle_from_info(row["info"]).metadata
    sol, grid = m["solution"], m["grid"]
    assert all(
        (g == "X") == (s != " ")
        for gr, sr in zip(grid, sol, strict=True)
        for g, s in zip(gr, sr, strict=True)
    )
    lines = ["".join(r) for r in sol]
    cols = ["".join(r[c] for r in sol) for c in range(len(sol[0]))]
    for word in m["across_words"]:
        assert any(word in part for line in lines for part in line.split(" "))
    for word in m["down_words"]:
        assert any(word in part for line in cols for part in line.split(" "))


LAYOUT = [["X", "0", "X", "X"]]
P = Puzzle(family.NAME, "q", "", 1, {"grid": LAYOUT, "across_words": ["at"], "down_words": []})


def test_forms_and_the_gap_rule():
    assert verify(P, 'Filled:\n[["b", " ", "a", "t"]]') == 1.0
    assert verify(P, '[["B", "0", "A", "T"]]') == 1.0
    assert verify(P, "[[B, '', A, T]]") == 1.0
    p = Puzzle(family.NAME, "q", "", 1, {"grid": LAYOUT, "across_words": ["bat"], "down_words": []})
    # Upstream joined the row with the gap removed and found "bat"; the word spans an empty cell.
    assert verify(p, '[["b", " ", "a", "t"]]') == 0.0


test_bad_replies_score_zero = wrong_replies_test(
    P,
    [
        "",
        '[["b", " ", "o", "t"]]',
        '[["b", "x", "a", "t"]]',  # a letter in an empty cell
        '[[" ", " ", "a", "t"]]',  # a letter cell left empty
        '[["bb", " ", "a", "t"]]',
        '[["b", " ", "o", "t"]] or [["b", " ", "a", "t"]]',
        '[["b", " ", "a", "t"]]\n[["b", " ", "a"]]',
    ],
)


test_check_rejects_broken_metadata = broken_metadata_test(
    family.check,
    family.NAME,
    [
        {"grid": LAYOUT, "across_words": ["at"]},
        {"grid": [["X", "1"]], "across_words": ["at"], "down_words": []},
        {"grid": LAYOUT, "across_words": [], "down_words": []},
        {"grid": LAYOUT, "across_words": ["a t"], "down_words": []},
    ],
)
