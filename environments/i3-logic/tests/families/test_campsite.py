"""Campsite (Tents): rules checked (counts, no touching tents, one tree per tent); every tent
placement on small grids graded as a brute-force judge says."""

from __future__ import annotations

import itertools
import json

import pytest
from i3_logic import Puzzle, puzzle_from_info, verify
from i3_logic.families import campsite as family
from i3_logic_testkit import REMOVED, changed, real_rows, rejected_test

ROWS = real_rows(family.NAME)
PUZZLES = [puzzle_from_info(r["info"]) for r in ROWS]


def judge(meta: dict, g: list[list[str]]) -> bool:
    """The rules, with the tent-tree pairing found by trying every assignment."""
    grid = meta["grid"]
    n, m = len(grid), len(grid[0])
    if len(g) != n or any(len(r) != m or set(r) - {"T", "C", "X"} for r in g):
        return False
    if any((grid[r][c] == "T") != (g[r][c] == "T") for r in range(n) for c in range(m)):
        return False
    tents = [(r, c) for r in range(n) for c in range(m) if g[r][c] == "C"]
    trees = [(r, c) for r in range(n) for c in range(m) if g[r][c] == "T"]
    if [r.count("C") for r in g] != meta["row_constraints"]:
        return False
    if [sum(g[r][c] == "C" for r in range(n)) for c in range(m)] != meta["col_constraints"]:
        return False
    if any(max(abs(a - c), abs(b - d)) == 1 for (a, b), (c, d) in itertools.combinations(tents, 2)):
        return False
    if len(tents) != len(trees):
        return False
    return any(
        all(abs(a - c) + abs(b - d) == 1 for (a, b), (c, d) in zip(tents, order, strict=True))
        for order in itertools.permutations(trees)
    )


@pytest.mark.parametrize("p", PUZZLES)
def test_rows_hold_a_solution(p: Puzzle):
    assert judge(p.metadata, p.metadata["solution"]) and p.answer == ""


@pytest.mark.parametrize(
    "grid,rows,cols",
    [
        ([["T", "X", "X"], ["X", "X", "T"], ["X", "X", "X"]], [1, 0, 1], [0, 1, 1]),
        ([["X", "T", "X"], ["X", "X", "X"], ["T", "X", "X"]], [1, 1, 0], [1, 0, 1]),
        ([["T", "T", "X"], ["X", "X", "X"], ["X", "X", "X"]], [1, 1, 0], [1, 0, 1]),
    ],
)
def test_every_placement_on_a_small_grid_is_graded_like_the_judge(grid, rows, cols):
    meta = {"grid": grid, "row_constraints": rows, "col_constraints": cols}
    p = Puzzle(family.NAME, "q", "", 1, meta)
    free = [(r, c) for r, row in enumerate(grid) for c, v in enumerate(row) if v == "X"]
    verdicts = []
    for marks in itertools.product("XC", repeat=len(free)):
        g = [row[:] for row in grid]
        for (r, c), v in zip(free, marks, strict=True):
            g[r][c] = v
        want = judge(meta, g)
        verdicts.append(want)
        assert verify(p, str(g)) == float(want), g
    assert any(verdicts) and not all(verdicts)


def test_a_tent_beside_two_trees_serves_one():
    # The middle tent touches both trees; the second tent must still have one of its own.
    meta = {"grid": [["T", "X", "T"]], "row_constraints": [1], "col_constraints": [0, 1, 0]}
    p = Puzzle(family.NAME, "q", "", 1, meta)
    assert verify(p, "[['T', 'C', 'T']]") == 0.0  # two trees, one tent


P = PUZZLES[0]
SOL = P.metadata["solution"]
MOVED = json.loads(ROWS[0]["_wrong"][0].split("\n", 1)[1].replace("'", '"'))


@pytest.mark.parametrize(
    "reply,score",
    [
        (str(SOL), 1.0),
        ("```python\n" + json.dumps(SOL) + "\n```", 1.0),
        (f"draft {MOVED}\nfinal {SOL}", 1.0),
        (f"{SOL}\nor perhaps {MOVED}", 0.0),  # upstream scored the first list
        (str(MOVED), 0.0),
        (str([["." if v == "X" else v for v in r] for r in SOL]), 0.0),  # upstream ignored "."
        (str([[v.lower() for v in r] for r in SOL]), 0.0),
        (str(SOL[:-1]), 0.0),
        ("```python\n" + str(SOL) + " or " + str(MOVED) + "\n```", 0.0),
        ("<answer>" + str(SOL), 0.0),
        ("[" * 4000, 0.0),
        ("All tents placed.", 0.0),
        ("", 0.0),
    ],
)
def test_replies(reply: str, score: float):
    assert judge(P.metadata, MOVED) is False
    assert verify(P, reply) == score


test_broken_metadata_is_refused = rejected_test(
    family.check,
    changed(
        P,
        [
            {"grid": REMOVED},
            {"grid": [["T", "C"], ["X", "X"]]},
            {"grid": [["T", "X"], ["X"]]},
            {"row_constraints": [1, 2]},
            {"col_constraints": "1,1,1,1,1"},
            {"n": 3},
            {"m": 3},
        ],
    ),
)
