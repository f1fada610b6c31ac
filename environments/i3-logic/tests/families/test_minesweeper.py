"""Minesweeper (SynLogic layout): rows solved by brute force, 0-based cells, the forced set."""

from __future__ import annotations

import itertools

import pytest
from i3_logic import Puzzle, puzzle_from_info, verify
from i3_logic.families import minesweeper as family
from i3_logic_testkit import broken_metadata_test, real_rows, wrong_replies_test

ROWS = real_rows("minesweeper")


def around(r: int, c: int, n: int) -> set[tuple[int, int]]:
    return {
        (r + a, c + b)
        for a in (-1, 0, 1)
        for b in (-1, 0, 1)
        if (a or b) and 0 <= r + a < n and 0 <= c + b < n
    }


def always_mines(grid: list[list[str]]) -> set[tuple[int, int]]:
    """Brute force: cells that are mines in every placement agreeing with the numbers."""
    n = len(grid)
    rules = [
        (int(v), {q for q in around(r, c, n) if grid[q[0]][q[1]] == "X"})
        for r in range(n)
        for c in range(n)
        if (v := grid[r][c]) != "X"
    ]
    # Cells linked through a shared number form a part; parts are enumerated one by one.
    parts: list[set[tuple[int, int]]] = []
    for _, hidden in rules:
        touching = [part for part in parts if part & hidden]
        merged = set(hidden).union(*touching)
        parts = [part for part in parts if not part & hidden] + [merged]
    forced: set[tuple[int, int]] = set()
    for part in parts:
        cells = sorted(part)
        assert len(cells) <= 20, "row too large for the brute force"
        local = [(v, h) for v, h in rules if h & part]
        found = None
        for bits in itertools.product((0, 1), repeat=len(cells)):
            mines = {q for q, b in zip(cells, bits, strict=True) if b}
            if all(len(h & mines) == v for v, h in local):
                found = mines if found is None else found & mines
        assert found is not None
        forced |= found
    return forced


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["question"][:30])
def test_row_is_consistent_and_its_stored_mines_are_forced(row):
    p = puzzle_from_info(row["info"])
    full, grid = p.metadata["full_grid"], p.metadata["revealed_grid"]
    n = p.metadata["n"]
    for r in range(n):
        for c in range(n):
            if grid[r][c] != "X":
                assert (
                    grid[r][c]
                    == full[r][c]
                    == str(sum(full[q[0]][q[1]] == "M" for q in around(r, c, n)))
                )
    stored = {tuple(m) for m in p.metadata["current_mines"]}
    exact = always_mines(grid)
    assert stored and stored <= exact
    assert family.forced_mines(grid) == exact


def test_rows_include_a_board_where_more_is_forced_than_the_rule_finds():
    boards = [puzzle_from_info(r["info"]).metadata for r in ROWS]
    assert any(
        always_mines(m["revealed_grid"]) > {tuple(x) for x in m["current_mines"]} for m in boards
    )


def test_generated_boards_store_the_one_rule_mines_and_they_are_forced():
    for i in range(6):
        p = family.generate(__import__("random").Random(i), 1)
        stored = {tuple(m) for m in p.metadata["current_mines"]}
        assert stored == family.one_rule_mines(p.metadata["revealed_grid"])
        assert stored <= always_mines(p.metadata["revealed_grid"])


P = Puzzle(
    "minesweeper",
    "q",
    "",
    1,
    {
        "revealed_grid": [["X", "1", "0"], ["1", "1", "0"], ["0", "0", "X"]],
        "current_mines": [[0, 0]],
    },
)


test_bad_replies_score_zero = wrong_replies_test(
    P,
    [
        "",
        "no idea",
        "[]",
        "[(0, 0)" + ", (0, 0)" * 2000 + "]",  # oversized
        "[(0, 0)] or [(2, 2)]",  # hedge
        "<answer>(0, 0) or (2, 2)</answer>",
        "[(1, 1)]",  # counted from 1
        "[(0, 0), (0, 0)]",
    ],
)


def test_bare_final_list_and_tagged_answer_are_read():
    assert verify(P, "The top-left must be a mine:\n[(0, 0)]") == 1.0
    assert verify(P, "<answer>[(0, 0)]</answer>") == 1.0


test_check_rejects_broken_metadata = broken_metadata_test(
    family.check,
    "minesweeper",
    [
        {"revealed_grid": [["X", "1"], ["1", "1"]]},
        {"revealed_grid": [["X", "9"], ["1", "1"]], "current_mines": [[0, 0]]},
        {"revealed_grid": [["X", "1"], ["1", "1"]], "current_mines": [[0, 1]]},  # not hidden
        {"revealed_grid": [["X", "1"], ["1", "1"]], "current_mines": [[1, 2]]},
        {"board": [[-1, 1], [1, 1]], "mines": 1},  # this package's old layout
    ],
)
