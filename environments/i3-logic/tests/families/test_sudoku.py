"""Sudoku in SynLogic's layout: X blanks, the tuple-of-tuples answer, rules checked."""

from __future__ import annotations

import pytest
from i3_logic import Puzzle, puzzle_from_info, verify
from i3_logic.families import sudoku as family
from i3_logic_testkit import broken_metadata_test, real_rows, replies_test

ROWS = real_rows(family.NAME)
PUZZLES = [puzzle_from_info(r["info"]) for r in ROWS]


def judge(given: list[list], grid: list[list[int]]) -> bool:
    """Rows, columns and 3x3 boxes are permutations of 1..9, clues kept (blank: X or 0)."""
    digits = list(range(1, 10))
    lines = [*grid, *map(list, zip(*grid, strict=True))]
    boxes = [
        [grid[r][c] for r in range(R, R + 3) for c in range(C, C + 3)]
        for R in (0, 3, 6)
        for C in (0, 3, 6)
    ]
    kept = all(
        v in ("X", 0) or int(v) == grid[r][c]
        for r, row in enumerate(given)
        for c, v in enumerate(row)
    )
    return kept and all(sorted(x) == digits for x in lines + boxes)


@pytest.mark.parametrize("p", PUZZLES)
def test_rows_hold_a_valid_9x9_puzzle_and_its_solution(p: Puzzle):
    meta = p.metadata
    assert len(meta["original_sudoku"]) == 9 and any("X" in r for r in meta["original_sudoku"])
    assert judge(meta["original_sudoku"], meta["complete_sudoku"])
    assert family.count_solutions(meta["original_sudoku"], 3, 3) == 1
    assert p.answer == str(tuple(tuple(r) for r in meta["complete_sudoku"]))


P = PUZZLES[0]
SOL = P.metadata["complete_sudoku"]
TUPLE = family.as_tuple_text(SOL)
OTHER = [[v % 9 + 1 for v in row] for row in SOL]  # a valid Sudoku breaking every clue


test_replies = replies_test(
    P,
    [
        (f"Done.\n```python\n{TUPLE}\n```", 1.0),
        (f"```python\n{TUPLE.replace(' ', '')}\n```", 1.0),
        (f"The solved grid:\n{TUPLE}", 1.0),  # a bare tuple (upstream's fallback)
        (f"<answer>{SOL}</answer>", 1.0),
        ("<answer>" + "\n".join(" ".join(map(str, r)) for r in SOL) + "</answer>", 1.0),
        (f"```python\n{family.as_tuple_text(OTHER)}\n```", 0.0),  # valid grid, clues lost
        (f"```python\n{TUPLE}\n```\nwait, no:\n```python\n{family.as_tuple_text(OTHER)}\n```", 0.0),
        (f"```python\n{TUPLE} or {family.as_tuple_text(OTHER)}\n```", 0.0),
        (f"```python\n{family.as_tuple_text(SOL[:8])}\n```", 0.0),
        (f"<answer>{TUPLE}", 0.0),  # the tag never closed
        (f"```python\n{TUPLE[:-1]}, (1, 2, 3, 4, 5, 6, 7, 8, 9))\n```", 0.0),
        ("```python\n" + "(" * 3000 + "1" + ")" * 3000 + "\n```", 0.0),
        (f"<answer>{'9' * 5000}</answer>", 0.0),
        ("```python\n__import__('os').system('echo hacked')\n```", 0.0),
        ("```python\ntuple(tuple(range(1, 10)) for _ in range(9))\n```", 0.0),  # never evaluated
        ("I solved it; every row is fine.", 0.0),
        ("", 0.0),
    ],
)


def test_zero_and_x_are_both_blanks_and_digit_strings_are_clues():
    given = [row[:] for row in P.metadata["original_sudoku"]]
    mixed = [
        [0 if v == "X" and (r + c) % 2 else v for c, v in enumerate(row)]
        for r, row in enumerate(given)
    ]
    as_strings = [[str(v) if v != "X" else v for v in row] for row in given]
    for grid in (mixed, as_strings):
        p = Puzzle(family.NAME, "q", "", 3, {"original_sudoku": grid})
        assert verify(p, f"```python\n{TUPLE}\n```") == 1.0
        assert verify(p, f"```python\n{family.as_tuple_text(OTHER)}\n```") == 0.0


test_broken_metadata_is_refused = broken_metadata_test(
    family.check,
    family.NAME,
    [
        {},
        {"original_sudoku": "53..7...."},
        {"original_sudoku": [["X"] * 9] * 8},
        {"original_sudoku": [["X"] * 5] * 5},
        {"original_sudoku": [["X"] * 9] * 8 + [["X"] * 8 + [10]]},
        {"original_sudoku": [["X"] * 9] * 8 + [["X"] * 8 + ["?"]]},
        {"original_sudoku": [["X"] * 9] * 8 + [["X"] * 8 + [True]]},
    ],
)
