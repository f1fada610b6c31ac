"""Numbrix: the rows' paths re-checked here; the bare final list the prompt asks for."""

from __future__ import annotations

import pytest
from i3_logic import Puzzle, puzzle_from_info, verify
from i3_logic.families import numbrix as family
from i3_logic_testkit import real_rows, rejected_test, wrong_replies_test

ROWS = real_rows(family.NAME)


def is_path(given: list[list], grid: list[list[int]]) -> bool:
    n = len(grid)
    cells = {grid[r][c]: (r, c) for r in range(n) for c in range(n)}
    steps = (
        all(
            abs(cells[k][0] - cells[k + 1][0]) + abs(cells[k][1] - cells[k + 1][1]) == 1
            for k in range(1, n * n)
        )
        if set(cells) == set(range(1, n * n + 1))
        else False
    )
    kept = all(v in ("X", grid[r][c]) for r, row in enumerate(given) for c, v in enumerate(row))
    return steps and kept


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["question"][:30])
def test_row_solution_is_a_path_through_the_hints(row):
    m = puzzle_from_info(row["info"]).metadata
    assert is_path(m["grid"], m["solution"])


P = Puzzle(family.NAME, "q", "", 1, {"grid": [[1, "X"], ["X", "X"]], "n": 2})


def test_forms():
    assert verify(P, "Going round:\n[[1, 2], [4, 3]]") == 1.0
    assert verify(P, "[\n    [1, 4],\n    [2, 3]\n]\nThat is the path.") == 1.0  # any path
    assert verify(P, '```python\n[["1", "2"], ["4", "3"]]\n```') == 1.0


test_bad_replies_score_zero = wrong_replies_test(
    P,
    [
        "",
        "[[1, 2], [3, 4]]",  # 2 and 3 are diagonal
        "[[2, 1], [3, 4]]",  # the hint moved
        "[[1, 2], [4, 3]] or [[1, 4], [2, 3]]",
        "[[1, 2], [4]]",
        "[[1, 2], [4, 3]] or [[2, 1], [3, 4]]",
        "[[" + "1, " * 3000 + "]]",
    ],
)


test_check_rejects_broken_metadata = rejected_test(
    family.check,
    [
        Puzzle(family.NAME, "q", "", 1, {"grid": grid})
        for grid in [[[1, "X"]], [[1, 1], ["X", "X"]], [[1, 5], ["X", "X"]], [[1, "Y"], ["X", "X"]]]
    ],
)
