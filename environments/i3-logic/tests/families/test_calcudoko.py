"""Calcudoko: regions as SynLogic stores them ("(r,c)" strings from 1, ÷ for division); every
Latin square of the 4x4 row graded as a judge says."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from i3_logic import Puzzle, puzzle_from_info, verify
from i3_logic.families import calcudoko as family
from i3_logic_testkit import broken_metadata_test, latin_squares, real_rows, replies_test

ROWS = real_rows(family.NAME)
PUZZLES = [puzzle_from_info(r["info"]) for r in ROWS]


def cells(region: dict) -> list[tuple[int, int]]:
    pairs = (c.strip("()").split(",") for c in region["cells"])
    return [(int(r) - 1, int(c) - 1) for r, c in pairs]


def judge(p: Puzzle, g: list[list[int]]) -> bool:
    n = p.metadata["grid_size"]
    if not all(sorted(line) == list(range(1, n + 1)) for line in [*g, *zip(*g, strict=True)]):
        return False
    for region in p.metadata["regions"]:
        vals = [g[r][c] for r, c in cells(region)]
        t, op = region["target"], region["operator"]
        by_operator: dict[str, set[Any]] = {
            "+": {sum(vals)},
            "*": {eval_product(vals)},
            "-": {abs(vals[0] - vals[1])} if len(vals) == 2 else set(),
            "÷": {Fraction(vals[0], vals[1]), Fraction(vals[1], vals[0])}
            if len(vals) == 2
            else set(),
        }
        if len(set(vals)) != len(vals) or t not in by_operator[op]:
            return False
    return True


def eval_product(vals: list[int]) -> int:
    out = 1
    for v in vals:
        out *= v
    return out


def bracket(g: list[list[int]]) -> str:
    return "[[" + ",".join(" ".join(map(str, r)) for r in g) + "]]"


def test_rows_partition_the_grid_and_hold_their_answer():
    for p in PUZZLES:
        n = p.metadata["grid_size"]
        covered = sorted(c for region in p.metadata["regions"] for c in cells(region))
        assert covered == [(r, c) for r in range(n) for c in range(n)]
        solution = [[int(v) for v in row.split()] for row in p.answer.strip("[]").split(",")]
        assert judge(p, solution)


def test_every_4x4_latin_square_is_graded_like_the_judge():
    p = next(p for p in PUZZLES if p.metadata["grid_size"] == 4)
    accepted = 0
    for g in latin_squares(4):
        want = judge(p, g)
        accepted += want
        assert verify(p, bracket(g)) == float(want), g
    assert accepted >= 1


def test_division_is_exact():
    # 5 / 2 rounds down to 2 (how upstream's generator computed targets), but is not 2.
    region = {"cells": ["(1,1)", "(1,2)"], "target": 2, "operator": "÷"}
    p = Puzzle(family.NAME, "q", "", 1, {"grid_size": 5, "regions": [region]})

    def shifted(first: list[int]) -> list[list[int]]:  # a Latin square with this first row
        return [first[i:] + first[:i] for i in range(5)]

    assert verify(p, bracket(shifted([5, 2, 1, 3, 4]))) == 0.0
    assert verify(p, bracket(shifted([4, 2, 1, 3, 5]))) == 1.0
    assert verify(p, bracket(shifted([2, 4, 1, 3, 5]))) == 1.0  # either order


P = next(p for p in PUZZLES if p.metadata["grid_size"] == 4)
SOL = [[int(v) for v in row.split()] for row in P.answer.strip("[]").split(",")]
WRONG = next(g for g in latin_squares(4) if not judge(P, g))


test_replies = replies_test(
    P,
    [
        (bracket(SOL), 1.0),
        (f"first guess {bracket(WRONG)}, fixed: {bracket(SOL)}", 1.0),
        (f"<answer>{SOL}</answer>", 1.0),
        ("```\n" + "\n".join(" ".join(map(str, r)) for r in SOL) + "\n```", 1.0),
        (f"{bracket(SOL)} and then {bracket(WRONG)}", 0.0),
        (f"<answer>{bracket(SOL)} or {bracket(WRONG)}</answer>", 0.0),
        # Upstream padded short rows and missing rows with 1s; here they are malformed.
        ("[[" + ",".join(" ".join(map(str, r)) for r in SOL[:3]) + "]]", 0.0),
        ("[[" + ",".join(" ".join(map(str, r[:3])) for r in SOL) + "]]", 0.0),
        ("[[1 2 3 4 5,2 3 4 1,3 4 1 2,4 1 2 3]]", 0.0),
        (f"<answer>{bracket(SOL)}", 0.0),
        ("[[" + "1 " * 3000 + "]]", 0.0),
        ("The regions all add up.", 0.0),
        ("", 0.0),
    ],
)


def test_region_cells_may_be_pairs_too():
    regions = [
        {**r, "cells": [[row + 1, col + 1] for row, col in cells(r)]} for r in P.metadata["regions"]
    ]
    p = Puzzle(family.NAME, "q", "", 1, {"grid_size": 4, "regions": regions})
    assert verify(p, bracket(SOL)) == 1.0 and verify(p, bracket(WRONG)) == 0.0


test_broken_metadata_is_refused = broken_metadata_test(
    family.check,
    family.NAME,
    [
        {"regions": []},
        {"grid_size": 4},
        {"grid_size": 4, "regions": []},
        {"grid_size": 4, "regions": [{"cells": ["(1,1)"], "target": 1}]},
        {"grid_size": 4, "regions": [{"cells": ["(1,1)"], "target": 1, "operator": "%"}]},
        {"grid_size": 4, "regions": [{"cells": ["(5,1)"], "target": 1, "operator": "+"}]},
        {"grid_size": 4, "regions": [{"cells": ["1,1"], "target": 1, "operator": "+"}]},
        {"grid_size": 4, "regions": [{"cells": ["(1,1)"], "target": "1", "operator": "+"}]},
        {"grid_size": 4, "regions": [{"cells": [], "target": 1, "operator": "+"}]},
        {"grid_size": "4", "regions": [{"cells": ["(1,1)"], "target": 1, "operator": "+"}]},
    ],
)
