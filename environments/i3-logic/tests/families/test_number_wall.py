"""Number wall: the rows' solutions re-checked by a separate rule check; added numbers refused."""

from __future__ import annotations

import json

import pytest
from i3_logic import Puzzle, puzzle_from_info, verify
from i3_logic.families import number_wall as family
from i3_logic_testkit import broken_metadata_test, real_rows, wrong_replies_test

ROWS = real_rows(family.NAME)


def rules_hold(given: list[list], grid: list[list]) -> bool:
    """Flood fill by recursion (the package uses a queue) over non-wall cells."""
    n = len(grid)
    label: dict[tuple[int, int], int] = {}

    def fill(r: int, c: int, k: int) -> None:
        if not (0 <= r < n and 0 <= c < n) or (r, c) in label or grid[r][c] == "A":
            return
        label[(r, c)] = k
        for a, b in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
            fill(a, b, k)

    for r in range(n):
        for c in range(n):
            if grid[r][c] != "A" and (r, c) not in label:
                fill(r, c, len(set(label.values())))
    for k in set(label.values()):
        cells = [p for p, v in label.items() if v == k]
        nums = [grid[r][c] for r, c in cells if isinstance(grid[r][c], int)]
        if nums != [len(cells)]:
            return False
    blocks = [
        [grid[r + a][c + b] for a in (0, 1) for b in (0, 1)]
        for r in range(n - 1)
        for c in range(n - 1)
    ]
    if any(block == ["A"] * 4 for block in blocks):
        return False
    for r in range(n - 1):
        for c in range(n - 1):
            for (p, q), (s, t) in (((0, 0), (1, 1)), ((0, 1), (1, 0))):
                x, y = (r + p, c + q), (r + s, c + t)
                others = [(r + p, c + t), (r + s, c + q)]
                if x in label and y in label and all(grid[i][j] == "A" for i, j in others):
                    if label[x] != label[y]:
                        return False
    return all(grid[r][c] == given[r][c] for r in range(n) for c in range(n) if given[r][c] != "X")


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["question"][:30])
def test_row_solution_holds(row):
    m = puzzle_from_info(row["info"]).metadata
    assert rules_hold(m["grid"], m["solution"])
    assert (
        verify(puzzle_from_info(row["info"]), f"```python\n{json.dumps(m['solution'])}\n```") == 1.0
    )


GIVEN = [[2, "X", "X"], ["X", "X", "X"], ["X", "X", 1]]
P = Puzzle(family.NAME, "q", "", 1, {"grid": GIVEN, "n": 3})
RIGHT = [[2, "X", "A"], ["A", "A", "A"], ["X", "A", 1]]  # wrong: (2, 0) is an island of its own


def test_a_valid_layout_and_an_added_number():
    good = [[2, "A", "X"], ["X", "A", "X"], ["A", "X", 1]]  # islands 2, then 3 cells with 1: bad
    assert not rules_hold(GIVEN, good) and verify(P, f"```python\n{good}\n```") == 0.0
    ok = [[2, "X", "A"], ["A", "A", "X"], ["X", "A", 1]]
    assert rules_hold(GIVEN, [[2, "X", "A"], ["A", "A", "A"], ["A", "A", 1]]) is False  # 2x2 walls
    # Upstream accepted a number the puzzle does not have when it formed a legal island.
    added = [[2, "X", "A"], ["A", "X", "A"], [1, "A", 1]]
    assert verify(P, f"```python\n{added}\n```") == 0.0
    del ok


def test_solved_small_puzzle_and_forms():
    given = [[1, "X"], ["X", 1]]
    p = Puzzle(family.NAME, "q", "", 1, {"grid": given, "n": 2})
    grid = [[1, "A"], ["A", 1]]  # the two 1s touch only at a corner, across walls: not allowed
    assert rules_hold(given, grid) is False and verify(p, f"```python\n{grid}\n```") == 0.0
    given = [[1, "X", "X"], ["X", "X", "X"], ["X", "X", 3]]
    p = Puzzle(family.NAME, "q", "", 1, {"grid": given, "n": 3})
    grid = [[1, "A", "X"], ["A", "A", "X"], ["A", "A", 3]]
    assert not rules_hold(given, grid)  # 2x2 walls at the bottom-left
    grid = [[1, "A", "A"], ["A", "X", "X"], ["A", "A", 3]]
    assert not rules_hold(given, grid)  # the 1 and the 3-island meet at a corner
    assert verify(p, f"```python\n{grid}\n```") == 0.0
    grid = [[1, "A", "A"], ["A", "A", "X"], ["A", "X", 3]]
    assert rules_hold(given, grid)
    assert verify(p, f"Walls around the 1.\n```python\n{grid}\n```") == 1.0
    assert verify(p, f"The answer is {json.dumps(grid)}") == 1.0
    assert verify(p, json.dumps([[str(v) for v in r] for r in grid])) == 1.0  # digit strings


test_bad_replies_score_zero = wrong_replies_test(
    P,
    [
        "",
        "```python\n[[1, A, A]]\n```",
        "walls",
        "```python\n" + "[" * 50 + "\n```",
        "[[1]] or [[2]]",
    ],
)


test_check_rejects_broken_metadata = broken_metadata_test(
    family.check,
    family.NAME,
    [
        {"grid": GIVEN},
        {"grid": [["X", "X"], ["X", "X"]], "n": 2},
        {"grid": [[2, "Y"], ["X", 1]], "n": 2},
    ],
)
