"""Norinori: every region covered exactly twice (upstream skipped regions with no cover),
shadow cells covered, dominoes never sharing an edge; every domino set on a small grid graded
as a judge says."""

from __future__ import annotations

import itertools
import json

import pytest
from i3_logic import Puzzle, puzzle_from_info, verify
from i3_logic.families import norinori as family
from i3_logic_testkit import broken_metadata_test, real_rows, replies_test

ROWS = real_rows(family.NAME)
PUZZLES = [puzzle_from_info(r["info"]) for r in ROWS]


def judge(regions: list[list[str]], dominoes: list[list[tuple[int, int]]]) -> bool:
    n = len(regions)
    cells = [c for d in dominoes for c in d]
    if len(set(cells)) != len(cells) or not all(1 <= r <= n and 1 <= c <= n for r, c in cells):
        return False
    if any(abs(a[0] - b[0]) + abs(a[1] - b[1]) != 1 for a, b in dominoes):
        return False
    for d, e in itertools.combinations(dominoes, 2):
        if any(abs(x[0] - y[0]) + abs(x[1] - y[1]) == 1 for x in d for y in e):
            return False
    covered = set(cells)
    for label in {v for row in regions for v in row}:
        mine = [(r + 1, c + 1) for r in range(n) for c in range(n) if regions[r][c] == label]
        count = sum(cell in covered for cell in mine)
        if (label == "X" and count != len(mine)) or (label != "X" and count != 2):
            return False
    return True


def text(dominoes) -> str:
    return "[" + ", ".join(f"[({a[0]},{a[1]}), ({b[0]},{b[1]})]" for a, b in dominoes) + "]"


@pytest.mark.parametrize("p", PUZZLES)
def test_rows_hold_a_solution(p: Puzzle):
    sol = [[tuple(a), tuple(b)] for a, b in p.metadata["solution"]]
    assert judge(p.metadata["region_grid"], sol) and p.answer == ""
    assert verify(p, text(sol)) == 1.0


def all_dominoes(n: int):
    for r, c in itertools.product(range(1, n + 1), repeat=2):
        if c < n:
            yield [(r, c), (r, c + 1)]
        if r < n:
            yield [(r, c), (r + 1, c)]


@pytest.mark.parametrize(
    "regions,most",
    [
        ([["A", "A", "B"], ["A", "B", "B"], ["B", "B", "B"]], 3),
        ([["A", "A", "A"], ["A", "B", "B"], ["B", "B", "B"]], 3),
        ([["X", "X", "A", "A"], ["B", "B", "A", "A"], ["B", "B", "B", "B"], ["C"] * 4], 4),
    ],
)
def test_every_small_set_of_dominoes_is_graded_like_the_judge(regions, most):
    p = Puzzle(family.NAME, "q", "", 1, {"region_grid": regions})
    verdicts = set()
    for k in range(1, most + 1):
        for chosen in itertools.combinations(all_dominoes(len(regions)), k):
            want = judge(regions, list(chosen))
            verdicts.add(want)
            assert verify(p, text(chosen)) == float(want), chosen
    assert verdicts == {True, False}


def test_a_region_left_uncovered_fails():
    # Upstream counted only the regions a domino touched: one domino in region A passed.
    p = Puzzle(family.NAME, "q", "", 1, {"region_grid": [["A", "A", "A"], ["B"] * 3, ["B"] * 3]})
    assert verify(p, "[[(1,1), (1,2)]]") == 0.0
    assert verify(p, "[[(1,1), (1,2)], [(3,2), (3,3)]]") == 1.0
    assert verify(p, "[]") == 0.0  # upstream: no domino, no shadow cell -> 1


P = PUZZLES[1]
SOL = [[tuple(a), tuple(b)] for a, b in P.metadata["solution"]]


test_replies = replies_test(
    P,
    [
        (text(SOL), 1.0),
        ("```python\n" + str(SOL) + "\n```", 1.0),
        (json.dumps(P.metadata["solution"]), 1.0),
        ("<answer>" + text(SOL)[1:-1] + "</answer>", 1.0),  # the pairs without outer brackets
        # Upstream collected every pair anywhere in the reply; only the answer counts here.
        ("I first tried [(1,2), (1,3)] and [(2,2), (2,3)].\n\nFinal: " + text(SOL), 1.0),
        (text(SOL[:-1]), 0.0),
        (text([*SOL, SOL[0]]), 0.0),  # a domino twice
        (text([[(1, 1), (1, 3)], *SOL[1:]]), 0.0),
        (text([[(0, 1), (1, 1)], *SOL[1:]]), 0.0),
        ("[[(1,1), (1,2), (1,3)]]", 0.0),
        (f"<answer>{text(SOL)} or {text(SOL[:-1])}</answer>", 0.0),
        ("<answer>" + text(SOL), 0.0),
        ("[" * 4000, 0.0),
        ("Each region has two covered cells.", 0.0),
        ("", 0.0),
    ],
)


test_broken_metadata_is_refused = broken_metadata_test(
    family.check,
    family.NAME,
    [
        {},
        {"region_grid": "AB\nAB"},
        {"region_grid": [["A", "B"], ["A"]]},
        {"region_grid": [["A", "B", "C"], ["A", "B", "C"]]},
        {"region_grid": [["A", ""], ["A", "B"]]},
        {"region_grid": [["A", "B"], ["A", "B"]], "n": 3},
    ],
)
