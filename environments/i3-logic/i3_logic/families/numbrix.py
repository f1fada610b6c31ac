"""Numbrix (SynLogic): number the grid 1..n² as one path of orthogonal steps.

Some cells of the n x n grid hold hints; the rest are ``X``. Every number from 1 to n² is
placed once, each number next to its successor (sharing an edge), the hints kept. SynLogic's
metadata: ``grid`` (ints and ``"X"``), ``solution``, ``n``, ``fill_rate``.

The answer is the completed grid as a 2D Python list; the prompt shows only the bare list, so
the last top-level ``[...]`` of a reply without an answer block is read (as upstream, which took
the last ``[[...]]``). The verifier checks the rules, so any valid path scores 1.
"""

from __future__ import annotations

from typing import Any

from i3_logic.answers import int_grid_answer
from i3_logic.puzzle import Puzzle, PuzzleDataError, require

NAME = "numbrix"
ALIASES = ()


def _grid(puzzle: Puzzle) -> list[list[Any]]:
    (grid,) = require(puzzle.metadata, NAME, "grid")
    n = len(grid) if isinstance(grid, list) else 0
    if (
        not 2 <= n <= 20
        or not all(isinstance(row, list) and len(row) == n for row in grid)
        or not all(v == "X" or (type(v) is int and 1 <= v <= n * n) for row in grid for v in row)
    ):
        raise PuzzleDataError(f"{NAME} metadata 'grid' must be n x n cells, each 1..n² or 'X'")
    hints = [v for row in grid for v in row if v != "X"]
    if len(hints) != len(set(hints)):
        raise PuzzleDataError(f"{NAME} metadata 'grid' repeats a hint")
    return grid


def check(puzzle: Puzzle) -> None:
    _grid(puzzle)


def valid(given: list[list[Any]], grid: list[list[int]]) -> bool:
    n = len(given)
    where = {grid[r][c]: (r, c) for r in range(n) for c in range(n)}
    if sorted(where) != list(range(1, n * n + 1)) or len(where) != n * n:
        return False
    if any(given[r][c] not in ("X", grid[r][c]) for r in range(n) for c in range(n)):
        return False
    for k in range(1, n * n):
        (r1, c1), (r2, c2) = where[k], where[k + 1]
        if abs(r1 - r2) + abs(c1 - c2) != 1:
            return False
    return True


def verify(puzzle: Puzzle, text: str) -> float:
    given = _grid(puzzle)
    n = len(given)
    grid = int_grid_answer(text, n, n)
    return 1.0 if valid(given, grid) else 0.0
