"""Survo (SynLogic): fill the blanks of a sum matrix with the given numbers.

In the n x n matrix the last entry of each row and each column is the sum of the others in that
row or column. Some inner cells are blank (0 in ``original_matrix``, ``X`` in the prompt); the
given ``candidate_numbers`` fill them, each used once. SynLogic's metadata:
``original_matrix``, ``filled_matrix``, ``candidate_numbers``, ``n``, ``x``, ``min_num``,
``max_num``.

The answer is the completed matrix as a 2D Python list in a ```` ```python ```` block at the end of
the reply (a bare list at the end is read too). The verifier checks upstream's rules: the given
entries kept, the numbers filled in are exactly the candidates (as a multiset), and every row
and column but the last sums to its last entry. Any matrix meeting them scores 1.
"""

from __future__ import annotations

from collections import Counter

from i3_logic.answers import int_grid_answer
from i3_logic.puzzle import Puzzle, PuzzleDataError, require

NAME = "survo"
ALIASES = ()


def _parts(puzzle: Puzzle) -> tuple[list[list[int]], list[int]]:
    matrix, numbers = require(puzzle.metadata, NAME, "original_matrix", "candidate_numbers")
    n = len(matrix) if isinstance(matrix, list) else 0
    if (
        not 2 <= n <= 20
        or not all(isinstance(row, list) and len(row) == n for row in matrix)
        or not all(type(v) is int for row in matrix for v in row)
    ):
        raise PuzzleDataError(f"{NAME} metadata 'original_matrix' must be an n x n integer grid")
    blanks = sum(v == 0 for row in matrix for v in row)
    if not isinstance(numbers, list) or not all(type(v) is int for v in numbers):
        raise PuzzleDataError(f"{NAME} metadata 'candidate_numbers' must be a list of integers")
    if len(numbers) != blanks or not blanks:
        raise PuzzleDataError(f"{NAME} metadata: one candidate number per blank (0) cell")
    return matrix, numbers


def check(puzzle: Puzzle) -> None:
    _parts(puzzle)


def valid(given: list[list[int]], numbers: list[int], grid: list[list[int]]) -> bool:
    n = len(given)
    cells = [(r, c) for r in range(n) for c in range(n)]
    if any(given[r][c] and given[r][c] != grid[r][c] for r, c in cells):
        return False
    if Counter(grid[r][c] for r, c in cells if not given[r][c]) != Counter(numbers):
        return False
    rows_ok = all(sum(grid[r][:-1]) == grid[r][-1] for r in range(n - 1))
    cols_ok = all(sum(grid[r][c] for r in range(n - 1)) == grid[n - 1][c] for c in range(n - 1))
    return rows_ok and cols_ok


def verify(puzzle: Puzzle, text: str) -> float:
    given, numbers = _parts(puzzle)
    n = len(given)
    grid = int_grid_answer(text, n, n)
    return 1.0 if valid(given, numbers, grid) else 0.0
