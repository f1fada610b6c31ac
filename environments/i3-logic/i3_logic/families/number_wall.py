"""Number wall (SynLogic): wall off islands whose sizes are their numbers.

The n x n grid holds some numbers; every other cell is ``X``. The solver turns cells into walls
(``"A"``) so that each island (cells joined horizontally or vertically, not walls) holds exactly
one number and as many cells as that number, walls never fill a 2x2 square, and two island cells
that touch only diagonally, across two walls, belong to the same island. SynLogic's metadata:
``grid`` (ints and ``"X"``), ``solution``, ``n``, ``number_rate``.

The answer is the grid as a 2D Python list of numbers, ``"X"`` and ``"A"``, in a
```` ```python ```` block at the end of the reply (a bare list at the end is read too; digit strings
count as numbers). The verifier checks the rules, so any valid wall layout scores 1. Stricter than
upstream: numbers may stand only where the puzzle has them (upstream accepted an answer that
adds its own numbers, each making a legal island of its own).
"""

from __future__ import annotations

from typing import Any

from i3_logic.answers import list_answer_block
from i3_logic.puzzle import (
    AnswerError,
    Puzzle,
    PuzzleDataError,
    literal_grid,
    require,
)

NAME = "number_wall"
ALIASES = ()
STEPS = ((0, 1), (1, 0), (0, -1), (-1, 0))


def _grid(puzzle: Puzzle) -> list[list[Any]]:
    grid, n = require(puzzle.metadata, NAME, "grid", "n")
    if (
        type(n) is not int
        or not 2 <= n <= 30
        or not isinstance(grid, list)
        or len(grid) != n
        or not all(isinstance(row, list) and len(row) == n for row in grid)
        or not all(v == "X" or (type(v) is int and 1 <= v <= n * n) for row in grid for v in row)
    ):
        raise PuzzleDataError(f"{NAME} metadata 'grid' must be n x n cells, each a number or 'X'")
    if not any(type(v) is int for row in grid for v in row):
        raise PuzzleDataError(f"{NAME} metadata 'grid' has no number")
    return grid


def check(puzzle: Puzzle) -> None:
    _grid(puzzle)


def read_grid(block: str, n: int) -> list[list[Any]]:
    """An n x n list of ints, "X" and "A" (digit strings read as ints); ``AnswerError`` else."""
    grid = []
    for row in literal_grid(block, n, n):
        cells = []
        for v in row:
            if isinstance(v, str) and v.strip().isascii() and v.strip().isdigit():
                v = int(v.strip())
            if not (type(v) is int or v in ("X", "A")):
                raise AnswerError("cells must be numbers, 'X' or 'A'")
            cells.append(v)
        grid.append(cells)
    return grid


def islands(grid: list[list[Any]]) -> list[list[tuple[int, int]]]:
    """The 4-connected groups of non-wall cells."""
    n = len(grid)
    seen: set[tuple[int, int]] = set()
    groups = []
    for r in range(n):
        for c in range(n):
            if grid[r][c] == "A" or (r, c) in seen:
                continue
            group = [(r, c)]
            seen.add((r, c))
            for cr, cc in group:
                for dr, dc in STEPS:
                    p = (cr + dr, cc + dc)
                    if (
                        0 <= p[0] < n
                        and 0 <= p[1] < n
                        and p not in seen
                        and grid[p[0]][p[1]] != "A"
                    ):
                        seen.add(p)
                        group.append(p)
            groups.append(group)
    return groups


def valid(given: list[list[Any]], grid: list[list[Any]]) -> bool:
    n = len(given)
    for r in range(n):
        for c in range(n):
            if (type(given[r][c]) is int or type(grid[r][c]) is int) and given[r][c] != grid[r][c]:
                return False  # a number lost, changed, or added
    for r in range(n - 1):
        for c in range(n - 1):
            if all(grid[r + i][c + j] == "A" for i in (0, 1) for j in (0, 1)):
                return False
    island_of = {}
    for k, group in enumerate(islands(grid)):
        numbers = [grid[r][c] for r, c in group if type(grid[r][c]) is int]
        if len(numbers) != 1 or numbers[0] != len(group):
            return False
        island_of.update(dict.fromkeys(group, k))
    for r in range(n - 1):
        for c in range(n - 1):
            a, b, d, e = grid[r][c], grid[r][c + 1], grid[r + 1][c], grid[r + 1][c + 1]
            # Island cells meeting only at a corner, between two walls, must be one island.
            if a != "A" and e != "A" and b == "A" and d == "A":
                if island_of[(r, c)] != island_of[(r + 1, c + 1)]:
                    return False
            if b != "A" and d != "A" and a == "A" and e == "A":
                if island_of[(r, c + 1)] != island_of[(r + 1, c)]:
                    return False
    return True


def verify(puzzle: Puzzle, text: str) -> float:
    given = _grid(puzzle)
    grid = read_grid(list_answer_block(text), len(given))
    return 1.0 if valid(given, grid) else 0.0
