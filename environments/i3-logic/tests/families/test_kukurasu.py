"""Kukurasu in SynLogic's layout: n x m grids of "1"/"X", weighted sums checked; every grid of
a row's size is graded as a brute-force judge says."""

from __future__ import annotations

import itertools
import json
import random

import pytest
from i3_logic import Puzzle, puzzle_from_info, verify
from i3_logic.families import kukurasu as family
from i3_logic_testkit import REMOVED, changed, real_rows, rejected_test, replies_test

ROWS = real_rows(family.NAME)
PUZZLES = [puzzle_from_info(r["info"]) for r in ROWS]


def judge(p: Puzzle, g: list[list[str]]) -> bool:
    m = p.metadata
    if len(g) != m["n"] or any(len(r) != m["m"] or set(r) - {"1", "X"} for r in g):
        return False
    rows = [sum(j + 1 for j, v in enumerate(r) if v == "1") for r in g]
    cols = [sum(i + 1 for i in range(m["n"]) if g[i][j] == "1") for j in range(m["m"])]
    return rows == m["row_sums"] and cols == m["col_sums"]


@pytest.mark.parametrize("p", PUZZLES)
def test_rows_are_solvable_and_graded_like_the_judge(p: Puzzle):
    m = p.metadata
    assert judge(p, m["solution"]) and p.answer == ""  # upstream's answer is empty
    assert all(r.count("X") == m["m"] for r in m["grid"])
    # Brute force: every combination of rows that meet their sums; the verifier accepts
    # exactly those whose columns also fit, and rejects random other grids.
    fits = [
        [list(r) for r in itertools.product("X1", repeat=m["m"]) if judge_row(r, want)]
        for want in m["row_sums"]
    ]
    solutions = 0
    for g in itertools.product(*fits):
        ok = judge(p, list(g))
        solutions += ok
        assert verify(p, json.dumps(list(g))) == float(ok), g
    assert solutions >= 1
    rng = random.Random(p.metadata["trace_id"])
    for _ in range(200):
        grid = [[rng.choice("X1") for _ in range(m["m"])] for _ in range(m["n"])]
        assert verify(p, json.dumps(grid)) == float(judge(p, grid)), grid


def judge_row(row: tuple[str, ...], want: int) -> bool:
    return sum(j + 1 for j, v in enumerate(row) if v == "1") == want


P = PUZZLES[1]  # 4 x 5: rows and columns differ
SOL = P.metadata["solution"]
BAD = [["1" if v == "X" else "X" for v in r] for r in SOL]


test_replies = replies_test(
    P,
    [
        (json.dumps(SOL), 1.0),
        ("```python\n" + str(SOL) + "\n```", 1.0),
        ("[\n" + ",\n".join("    " + json.dumps(r) for r in SOL) + "\n]", 1.0),
        ("<answer>" + "\n".join(" ".join(r) for r in SOL) + "</answer>", 1.0),
        ("<answer>" + "\n".join("".join(r) for r in SOL) + "</answer>", 1.0),
        ("<answer>" + str([[int(v == "1") for v in r] for r in SOL]) + "</answer>", 1.0),
        (f"draft: {json.dumps(BAD)}\nfinal: {json.dumps(SOL)}", 1.0),  # the last grid counts
        (f"{json.dumps(SOL)}\nhmm, or rather {json.dumps(BAD)}", 0.0),  # upstream took the first
        (json.dumps(BAD), 0.0),
        ("```python\n" + json.dumps(SOL) + " or " + json.dumps(BAD) + "\n```", 0.0),
        (json.dumps([r[:-1] for r in SOL]), 0.0),
        (json.dumps([[v.replace("X", "O") for v in r] for r in SOL]), 0.0),
        (json.dumps([[v.replace("1", "2") for v in r] for r in SOL]), 0.0),
        ("<answer>" + json.dumps(SOL), 0.0),
        ("[" * 4000, 0.0),
        ("The ones go where the weights add up.", 0.0),
        ("", 0.0),
    ],
)


test_broken_metadata_is_refused = rejected_test(
    family.check,
    changed(
        P,
        [
            {"row_sums": REMOVED},
            {"row_sums": "6,8"},
            {"col_sums": [1, "2"]},
            {"col_sums": []},
            {"n": 9},
            {"m": 2},
        ],
    ),
)
