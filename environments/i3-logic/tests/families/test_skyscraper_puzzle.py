"""Skyscrapers (SynLogic layout): the rows' solved grids meet every clue, checked here."""

from __future__ import annotations

import pytest
from i3_logic import Puzzle, puzzle_from_info, verify
from i3_logic.families import skyscraper_puzzle as family
from i3_logic_testkit import broken_metadata_test, real_rows, wrong_replies_test

ROWS = real_rows(family.NAME)


def seen(line: list[int]) -> int:
    return sum(h == max(line[: i + 1]) for i, h in enumerate(line))  # heights are distinct


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["question"][:30])
def test_row_solution_meets_every_clue(row):
    m = puzzle_from_info(row["info"]).metadata
    g, n = m["solved_grid"], m["n"]
    cols = [[g[r][c] for r in range(n)] for c in range(n)]
    assert all(sorted(line) == list(range(1, n + 1)) for line in g + cols)
    assert m["top"] == [seen(c) for c in cols] and m["bottom"] == [seen(c[::-1]) for c in cols]
    assert m["left"] == [seen(r) for r in g] and m["right"] == [seen(r[::-1]) for r in g]


SKY = Puzzle(
    family.NAME,
    "q",
    "",
    1,
    {"n": 3, "top": [3, 2, 1], "bottom": [1, 2, 2], "left": [3, 2, 1], "right": [1, 2, 2]},
)
GRID = [[1, 2, 3], [2, 3, 1], [3, 1, 2]]


def test_python_block_and_bare_final_list_are_read():
    assert verify(SKY, f"Reasoning.\n\nFinal answer:\n\n```python\n{GRID}\n```") == 1.0
    assert verify(SKY, f"So the grid is\n{GRID}") == 1.0


test_bad_replies_score_zero = wrong_replies_test(
    SKY,
    [
        "",
        "```python\n```",
        "```python\n[[1, 2, 3], [2, 3, 1]]\n```",
        "```python\n[[1, 3, 2], [3, 2, 1], [2, 1, 3]]\n```",  # Latin, clues broken
        f"```python\n{GRID}\nor\n[[1, 3, 2], [3, 2, 1], [2, 1, 3]]\n```",
        "```python\n" + str([[1] * 3000] * 3) + "\n```",
    ],
)


test_check_rejects_broken_metadata = broken_metadata_test(
    family.check,
    family.NAME,
    [
        {
            "size": 3,
            "top": [3, 2, 1],
            "bottom": [1, 2, 2],
            "left": [3, 2, 1],
            "right": [1, 2, 2],
        },
        {"n": 3, "top": [3, 2, 0], "bottom": [1, 2, 2], "left": [3, 2, 1], "right": [1, 2, 2]},
        {"n": 3, "top": [3, 2], "bottom": [1, 2, 2], "left": [3, 2, 1], "right": [1, 2, 2]},
    ],
)
