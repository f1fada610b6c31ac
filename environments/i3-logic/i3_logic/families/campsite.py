"""Campsite (Tents): place a tent next to each tree so that the row and column counts hold.

SynLogic's layout (``games/tasks/campsite``): ``metadata.grid`` is the ``n`` x ``m`` grid of
``"T"`` (tree) and ``"X"`` (empty), ``row_constraints`` / ``col_constraints`` the number of
tents (``"C"``) per row and column, ``solution`` one solution, ``tree_density``; ``answer`` is
empty. The prompt asks for the completed grid as a Python list of lists of ``'T'``, ``'C'``
and ``'X'``.

The verifier checks the rules: trees stay where they are and no tree is added, each row and
column holds its number of tents, no two tents touch (diagonals included), and tents and trees
pair off one to one, each tent orthogonally next to its own tree. Any valid grid scores 1.
Differences from upstream: the last list in the reply counts, not the first; a cell other than
``T``, ``C`` or ``X`` makes the answer malformed (upstream ignored such cells).
"""

from __future__ import annotations

from i3_logic.answers import grid_answer_block
from i3_logic.puzzle import (
    AnswerError,
    Puzzle,
    PuzzleDataError,
    literal_grid,
    require,
)

NAME = "campsite"
ALIASES = ()
MAX_SIZE = 30
SYMBOLS = ("T", "C", "X")

_STEPS = ((0, 1), (1, 0), (0, -1), (-1, 0))


def _parts(puzzle: Puzzle) -> tuple[list[list[str]], list[int], list[int]]:
    grid, rows, cols = require(puzzle.metadata, NAME, "grid", "row_constraints", "col_constraints")
    if (
        not isinstance(grid, list)
        or not 1 <= len(grid) <= MAX_SIZE
        or not all(isinstance(r, list) and len(r) == len(grid[0]) for r in grid)
        or not 1 <= len(grid[0]) <= MAX_SIZE
        or any(v not in ("T", "X") for r in grid for v in r)
    ):
        raise PuzzleDataError(f"{NAME} metadata 'grid' must be a rectangular grid of 'T' and 'X'")
    for name, values, want in (("row", rows, len(grid)), ("col", cols, len(grid[0]))):
        if (
            not isinstance(values, list)
            or len(values) != want
            or any(type(v) is not int for v in values)
        ):
            raise PuzzleDataError(f"{NAME} metadata '{name}_constraints' must be {want} integers")
    for key, want in (("n", len(grid)), ("m", len(grid[0]))):
        if key in puzzle.metadata and puzzle.metadata[key] != want:
            raise PuzzleDataError(f"{NAME} metadata {key!r} does not match the grid")
    return grid, rows, cols


def check(puzzle: Puzzle) -> None:
    _parts(puzzle)


def read_grid(text: str, rows: int, cols: int) -> list[list[str]]:
    """The grid of the reply's final answer block (or, without one, its last bracketed list):
    a list literal of rows of ``'T'``, ``'C'`` and ``'X'``."""
    value = literal_grid(grid_answer_block(text), rows, cols)
    if any(v not in SYMBOLS for r in value for v in r):
        raise AnswerError("cells must be 'T', 'C' or 'X'")
    return value


def _pairs_off(tents: list[tuple[int, int]], trees: set[tuple[int, int]]) -> bool:
    """A perfect matching of tents to orthogonally adjacent trees (augmenting paths)."""
    options = {t: [(t[0] + dr, t[1] + dc) for dr, dc in _STEPS] for t in tents}
    owner: dict[tuple[int, int], tuple[int, int]] = {}

    def place(tent: tuple[int, int], seen: set[tuple[int, int]]) -> bool:
        for tree in options[tent]:
            if tree in trees and tree not in seen:
                seen.add(tree)
                if tree not in owner or place(owner[tree], seen):
                    owner[tree] = tent
                    return True
        return False

    return len(tents) == len(trees) and all(place(t, set()) for t in tents)


def verify(puzzle: Puzzle, text: str) -> float:
    given, row_counts, col_counts = _parts(puzzle)
    n, m = len(given), len(given[0])
    grid = read_grid(text, n, m)
    if any((given[r][c] == "T") != (grid[r][c] == "T") for r in range(n) for c in range(m)):
        return 0.0
    tents = [(r, c) for r in range(n) for c in range(m) if grid[r][c] == "C"]
    if [sum(v == "C" for v in row) for row in grid] != row_counts:
        return 0.0
    if [sum(grid[r][c] == "C" for r in range(n)) for c in range(m)] != col_counts:
        return 0.0
    placed = set(tents)
    for r, c in tents:
        if any((r + dr, c + dc) in placed for dr in (-1, 0, 1) for dc in (-1, 0, 1) if dr or dc):
            return 0.0  # tents touch
    trees = {(r, c) for r in range(n) for c in range(m) if grid[r][c] == "T"}
    return 1.0 if _pairs_off(tents, trees) else 0.0
