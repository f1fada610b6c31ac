"""Norinori: cover exactly two cells of every region with dominoes that never share an edge.

SynLogic's layout (``games/tasks/norinori``): ``metadata.region_grid`` is the n x n grid of
region letters, with ``"X"`` for shadow cells (no region, but each must be covered);
``metadata.solution`` one solution as ``[[r1, c1], [r2, c2]]`` dominoes (from 1), ``n``,
``region_nums``, ``shadow_ratio``; ``answer`` is empty. The prompt asks for the dominoes as
``[[(r1,c1), (r1,c2)], [(r2,c1), (r2,c2)], ...]`` with coordinates from 1.

The verifier checks the rules: each domino covers two orthogonally adjacent cells of the grid,
no cell is covered twice, no two dominoes share an edge (touching diagonally is fine), every
shadow cell is covered, and every region has exactly two covered cells. Any valid placement
scores 1. Differences from upstream: a region with no covered cell fails (upstream only
checked the regions a domino touched, so leaving regions empty, even answering with no
domino at all on a puzzle without shadow cells, could score 1); the dominoes are read from the
reply's final answer (upstream collected every coordinate pair written anywhere in the reply).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from i3_logic.answers import clean, list_answer_block
from i3_logic.puzzle import AnswerError, Puzzle, PuzzleDataError, parse_literal, require

NAME = "norinori"
ALIASES = ()
MAX_SIZE = 30
SHADOW = "X"

Cell = tuple[int, int]


def _regions(puzzle: Puzzle) -> list[list[str]]:
    (grid,) = require(puzzle.metadata, NAME, "region_grid")
    if (
        not isinstance(grid, list)
        or not 2 <= len(grid) <= MAX_SIZE
        or any(not isinstance(r, list) or len(r) != len(grid) for r in grid)
        or any(not isinstance(v, str) or not v for r in grid for v in r)
    ):
        raise PuzzleDataError(f"{NAME} metadata 'region_grid' must be a square grid of labels")
    if "n" in puzzle.metadata and puzzle.metadata["n"] != len(grid):
        raise PuzzleDataError(f"{NAME} metadata 'n' does not match the region grid")
    return grid


def check(puzzle: Puzzle) -> None:
    _regions(puzzle)


def read_dominoes(text: str) -> list[tuple[Cell, Cell]]:
    """The dominoes of the reply's final answer block (or, without one, its last bracketed
    list): a list (or tuple) of pairs of ``(row, col)`` cells."""
    block = clean(list_answer_block(text))
    value: Any = parse_literal(block)
    if not isinstance(value, list) or not value:
        raise AnswerError("expected a list of dominoes")
    dominoes = []
    for domino in value:
        if (
            not isinstance(domino, list)
            or len(domino) != 2
            or not all(
                isinstance(cell, list) and len(cell) == 2 and all(type(v) is int for v in cell)
                for cell in domino
            )
        ):
            raise AnswerError("a domino is a pair of (row, col) cells")
        (r1, c1), (r2, c2) = domino
        dominoes.append(((r1, c1), (r2, c2)))
    return dominoes


def verify(puzzle: Puzzle, text: str) -> float:
    grid = _regions(puzzle)
    n = len(grid)
    dominoes = read_dominoes(text)
    owner: dict[Cell, int] = {}
    for index, ((r1, c1), (r2, c2)) in enumerate(dominoes):
        if abs(r1 - r2) + abs(c1 - c2) != 1:
            return 0.0  # not two orthogonal neighbours
        for r, c in ((r1, c1), (r2, c2)):
            if not (1 <= r <= n and 1 <= c <= n) or (r - 1, c - 1) in owner:
                return 0.0  # off the grid, or covered twice
            owner[r - 1, c - 1] = index
    for (r, c), index in owner.items():
        for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0)):
            if owner.get((r + dr, c + dc), index) != index:
                return 0.0  # two dominoes share an edge
    covered = Counter(grid[r][c] for r, c in owner)
    labels = {v for row in grid for v in row}
    shadows = sum(row.count(SHADOW) for row in grid)
    if covered[SHADOW] != shadows:
        return 0.0  # a shadow cell left uncovered
    return 1.0 if all(covered[label] == 2 for label in labels - {SHADOW}) else 0.0
