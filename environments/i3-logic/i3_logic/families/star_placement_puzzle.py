"""Star placement (Star Battle): one star in every row, column and region, none touching.

The n x n grid is split into n lettered regions. Place n stars so that each row, each column and
each region holds exactly one, and no two stars touch, not even diagonally. Level 1 is 5x5,
level 2 6x6, level 3 8x8. The generator places the stars first and grows the regions around
them, so every puzzle is solvable; the verifier checks the rules, so any valid placement scores
1. The answer lists the stars as ``(row, column)`` pairs numbered from 1.
"""

from __future__ import annotations

import random
import string

from i3_logic.answers import answer_block, parse_cells
from i3_logic.puzzle import (
    ANSWER_INSTRUCTION,
    AnswerError,
    Puzzle,
    PuzzleDataError,
    require,
)

NAME = "star_placement_puzzle"
ALIASES = ("star_battle",)
LEVELS = {1: 5, 2: 6, 3: 8}


def _columns(rng: random.Random, n: int) -> list[int]:
    """A column per row such that stars in consecutive rows do not touch."""

    def extend(cols: list[int]) -> list[int] | None:
        if len(cols) == n:
            return cols
        options = [c for c in range(n) if c not in cols and (not cols or abs(c - cols[-1]) > 1)]
        rng.shuffle(options)
        for c in options:
            found = extend([*cols, c])
            if found is not None:
                return found
        return None

    cols = extend([])
    assert cols is not None  # n >= 4 always has a placement
    return cols


def _grow_regions(rng: random.Random, n: int, stars: list[tuple[int, int]]) -> list[list[int]]:
    region = [[-1] * n for _ in range(n)]
    for k, (r, c) in enumerate(stars):
        region[r][c] = k
    unassigned = n * n - n
    while unassigned:
        k = rng.randrange(n)
        frontier = [
            (r2, c2)
            for r in range(n)
            for c in range(n)
            if region[r][c] == k
            for r2, c2 in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1))
            if 0 <= r2 < n and 0 <= c2 < n and region[r2][c2] == -1
        ]
        if frontier:
            r2, c2 = rng.choice(frontier)
            region[r2][c2] = k
            unassigned -= 1
    return region


def generate(rng: random.Random, difficulty: int) -> Puzzle:
    n = LEVELS[difficulty]
    stars = list(enumerate(_columns(rng, n)))
    region = _grow_regions(rng, n, stars)
    letters = string.ascii_uppercase
    regions = ["".join(letters[k] for k in row) for row in region]
    shown = "\n".join(" ".join(row) for row in regions)
    answer = ", ".join(f"({r + 1}, {c + 1})" for r, c in stars)
    question = (
        f"Solve this {n}x{n} star placement puzzle. The grid is divided into {n} regions, "
        "marked by letters. Place stars so that every row, every column and every region "
        "contains exactly one star, and no two stars touch each other, not even diagonally.\n\n"
        f"{shown}\n\n"
        "List the star cells as (row, column) pairs, numbered from 1 starting at the top-left, "
        f"e.g. (1, 2), (2, 4).\n{ANSWER_INSTRUCTION}"
    )
    metadata = {"regions": regions, "solution": [[r, c] for r, c in stars]}
    return Puzzle(NAME, question, answer, difficulty, metadata)


def _regions(puzzle: Puzzle) -> list[str]:
    (regions,) = require(puzzle.metadata, NAME, "regions")
    n = len(regions) if isinstance(regions, list) else 0
    if (
        n < 2
        or not all(isinstance(row, str) and len(row) == n for row in regions)
        or len({ch for row in regions for ch in row}) != n
    ):
        raise PuzzleDataError(
            f"{NAME} metadata 'regions' must be n strings of n letters, n regions"
        )
    return regions


def check(puzzle: Puzzle) -> None:
    _regions(puzzle)


def verify(puzzle: Puzzle, text: str) -> float:
    regions = _regions(puzzle)
    n = len(regions)
    try:
        stars = [(r - 1, c - 1) for r, c in parse_cells(answer_block(text))]
    except AnswerError:
        return 0.0  # no pairs, or anything besides them
    if len(stars) != n or any(not (0 <= r < n and 0 <= c < n) for r, c in stars):
        return 0.0
    if len({r for r, _ in stars}) != n or len({c for _, c in stars}) != n:
        return 0.0
    if len({regions[r][c] for r, c in stars}) != n:
        return 0.0
    for i, (r1, c1) in enumerate(stars):
        for r2, c2 in stars[i + 1 :]:
            if abs(r1 - r2) <= 1 and abs(c1 - c2) <= 1:
                return 0.0
    return 1.0
