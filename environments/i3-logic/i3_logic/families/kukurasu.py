"""Kukurasu: black out cells so that weighted row and column sums match the clues.

A black cell in column j (counted from 1) adds j to its row's sum; a black cell in row i adds i
to its column's sum. Level 1 is 4x4, level 2 5x5, level 3 6x6. The clues are computed from a
random grid, so every puzzle is solvable; the verifier checks the sums, so any grid that fits
scores 1. The answer is the grid with 1 for black and 0 for white cells.
"""

from __future__ import annotations

import random

from i3_logic.answers import answer_block
from i3_logic.puzzle import (
    ANSWER_INSTRUCTION,
    AnswerError,
    Puzzle,
    PuzzleDataError,
    format_grid,
    parse_grid,
    require,
)

NAME = "kukurasu"
ALIASES = ()
LEVELS = {1: 4, 2: 5, 3: 6}


def sums(grid: list[list[int]]) -> tuple[list[int], list[int]]:
    n_rows, n_cols = len(grid), len(grid[0])
    rows = [sum(c + 1 for c in range(n_cols) if grid[r][c]) for r in range(n_rows)]
    cols = [sum(r + 1 for r in range(n_rows) if grid[r][c]) for c in range(n_cols)]
    return rows, cols


def generate(rng: random.Random, difficulty: int) -> Puzzle:
    n = LEVELS[difficulty]
    while True:
        solution = [[int(rng.random() < 0.4) for _ in range(n)] for _ in range(n)]
        if any(any(row) for row in solution):
            break
    row_sums, col_sums = sums(solution)
    question = (
        f"Solve this {n}x{n} Kukurasu puzzle. Colour some cells black. A black cell in column j "
        "(columns counted from 1, left to right) adds j to its row's total; a black cell in row i "
        "(rows counted from 1, top to bottom) adds i to its column's total. Every total must "
        "equal its clue.\n\n"
        f"Row totals (top to bottom): {' '.join(map(str, row_sums))}\n"
        f"Column totals (left to right): {' '.join(map(str, col_sums))}\n\n"
        f"The answer is the grid: {n} lines, each with {n} values separated by spaces, 1 for a "
        f"black cell and 0 for a white one.\n{ANSWER_INSTRUCTION}"
    )
    metadata = {"row_sums": row_sums, "col_sums": col_sums, "solution": solution}
    return Puzzle(NAME, question, format_grid(solution), difficulty, metadata)


def _clues(puzzle: Puzzle) -> tuple[list[int], list[int]]:
    rows, cols = require(puzzle.metadata, NAME, "row_sums", "col_sums")
    for name, values in (("row_sums", rows), ("col_sums", cols)):
        if not isinstance(values, list) or not values or any(type(v) is not int for v in values):
            raise PuzzleDataError(f"{NAME} metadata {name!r} must be a list of integers")
    return rows, cols


def check(puzzle: Puzzle) -> None:
    _clues(puzzle)


def verify(puzzle: Puzzle, text: str) -> float:
    rows, cols = _clues(puzzle)
    try:
        grid = parse_grid(answer_block(text), len(rows), len(cols))
    except AnswerError:
        return 0.0
    if any(v not in (0, 1) for row in grid for v in row):
        return 0.0
    return 1.0 if sums(grid) == (rows, cols) else 0.0
