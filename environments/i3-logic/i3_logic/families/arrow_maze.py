"""Arrow maze: fill every blank with an arrow so each number counts the arrows pointing away.

From a number cell, a ray in one of the eight directions is the run of consecutive cells
holding the arrow of that direction (``→`` to the right, ``↖`` up-left, ...). A number equals
the total length of its rays, and every arrow must lie on some number's ray. SynLogic's layout
(``games/tasks/arrow_maze``): ``metadata.maze`` is the ``height`` x ``width`` grid of strings
(``"X"`` blank, a number, or a prefilled arrow), ``metadata.solution`` one solution, ``answer``
its JSON. The prompt asks for the completed grid as a 2D list in a ```` ```python ```` block at
the end of the reply.

The verifier checks the rules, so any valid grid scores 1. Differences from upstream: the reply
is parsed as a literal, never evaluated (upstream ``eval``s it); a blank must be filled with an
arrow (upstream also let a reply write a new number into a blank, which could satisfy the count
rules with numbers the puzzle never had).
"""

from __future__ import annotations

from i3_logic.answers import grid_answer_block
from i3_logic.puzzle import (
    Puzzle,
    PuzzleDataError,
    literal_grid,
    require,
)

NAME = "arrow_maze"
ALIASES = ()
MAX_SIZE = 30

ARROWS: dict[str, tuple[int, int]] = {
    "↑": (-1, 0),
    "↓": (1, 0),
    "←": (0, -1),
    "→": (0, 1),
    "↖": (-1, -1),
    "↗": (-1, 1),
    "↘": (1, 1),
    "↙": (1, -1),
}


def _is_number(cell: str) -> bool:
    return cell.isascii() and cell.isdigit()


def _maze(puzzle: Puzzle) -> list[list[str]]:
    (maze,) = require(puzzle.metadata, NAME, "maze")
    if (
        not isinstance(maze, list)
        or not 1 <= len(maze) <= MAX_SIZE
        or not all(isinstance(r, list) and len(r) == len(maze[0]) for r in maze)
        or not 1 <= len(maze[0]) <= MAX_SIZE
    ):
        raise PuzzleDataError(f"{NAME} metadata 'maze' must be a rectangular list of rows")
    for row in maze:
        for cell in row:
            if not isinstance(cell, str) or not (cell == "X" or cell in ARROWS or _is_number(cell)):
                raise PuzzleDataError(f"{NAME} maze cell {cell!r} is not X, a number or an arrow")
    for key, want in (("height", len(maze)), ("width", len(maze[0]))):
        if key in puzzle.metadata and puzzle.metadata[key] != want:
            raise PuzzleDataError(f"{NAME} metadata {key!r} does not match the maze")
    return maze


def check(puzzle: Puzzle) -> None:
    _maze(puzzle)


def read_grid(text: str, rows: int, cols: int) -> list[list[str]]:
    """The grid of the reply's final answer block (or, without one, its last bracketed list):
    a list literal of rows of strings; numbers may be written unquoted."""
    return [
        [str(v).strip() for v in row] for row in literal_grid(grid_answer_block(text), rows, cols)
    ]


def ray_total(grid: list[list[str]], r: int, c: int, covered: set[tuple[int, int]]) -> int:
    """Total length of the rays from (r, c); the cells on them are added to ``covered``."""
    total = 0
    for arrow, (dr, dc) in ARROWS.items():
        i, j = r + dr, c + dc
        while 0 <= i < len(grid) and 0 <= j < len(grid[0]) and grid[i][j] == arrow:
            covered.add((i, j))
            total += 1
            i, j = i + dr, j + dc
    return total


def verify(puzzle: Puzzle, text: str) -> float:
    maze = _maze(puzzle)
    rows, cols = len(maze), len(maze[0])
    grid = read_grid(text, rows, cols)
    for given, row in zip(maze, grid, strict=True):
        for want, got in zip(given, row, strict=True):
            if want == "X" and got not in ARROWS:
                return 0.0  # every blank holds an arrow
            if want != "X" and got != want:
                return 0.0  # numbers and prefilled arrows are kept
    covered: set[tuple[int, int]] = set()
    for r in range(rows):
        for c in range(cols):
            if _is_number(grid[r][c]) and ray_total(grid, r, c, covered) != int(grid[r][c]):
                return 0.0
    arrows = {(r, c) for r in range(rows) for c in range(cols) if grid[r][c] in ARROWS}
    return 1.0 if arrows <= covered else 0.0
