"""Star placement (SynLogic's ``star_placement_puzzle``, Star Battle): k stars in every row,
column and lettered region, no two touching, not even diagonally.

SynLogic's metadata: ``n``, ``k`` (stars per row, column and region), ``region_nums`` and
``region_grid`` (n lists of n region letters). Level 1 is 5x5, level 2 6x6, level 3 8x8, all
with k = 1; the generator places the stars first and grows the regions around them.

The answer is a Python dictionary from region letter to a list of 1-based ``(row, column)``
tuples in a ```` ```python ```` block, ``{'A': [(1, 2)], 'B': [(3, 1)]}`` (``name = {...}`` is read
too), or a plain list of ``(row, column)`` pairs. The verifier checks the rules (upstream's
check): k stars per row, column and region, none adjacent, so any valid placement scores 1. As
upstream, the letters the answer files the stars under are not checked; a cell named twice
is not an answer.
"""

from __future__ import annotations

import ast
import random
import re
import string

from i3_logic.answers import answer_block, parse_cells
from i3_logic.puzzle import ANSWER_INSTRUCTION_LOWER, AnswerError, Puzzle, PuzzleDataError, require

NAME = "star_placement_puzzle"
ALIASES = ()
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


def _answer_text(stars: list[tuple[int, int]], region: list[list[str]]) -> str:
    by_region = sorted((region[r][c], (r + 1, c + 1)) for r, c in stars)
    return "{" + ", ".join(f"{letter!r}: [{cell}]" for letter, cell in by_region) + "}"


def generate(rng: random.Random, difficulty: int) -> Puzzle:
    n = LEVELS[difficulty]
    stars = list(enumerate(_columns(rng, n)))
    letters = string.ascii_uppercase
    region = [[letters[k] for k in row] for row in _grow_regions(rng, n, stars)]
    shown = "\n".join("    [" + ", ".join(f'"{ch}"' for ch in row) + "]," for row in region)
    question = (
        f"This {n} x {n} grid is divided into regions marked by letters. Place stars so that "
        "every row, every column and every region holds exactly 1 star, and no two stars touch "
        "each other, horizontally, vertically or diagonally.\n\nRegion grid:\n\n"
        f"[\n{shown.rstrip(',')}\n]\n\n"
        "Give the stars as a Python dictionary from region letter to the list of its star "
        "cells as (row, column) tuples, counting from 1 at the top-left, regions in "
        "alphabetical order. End your reply with a ```python code block holding only that "
        "dictionary, like this:\n\n```python\n{'A': [(1, 1)], 'B': [(3, 2)], 'C': [(2, 3)]}\n```"
        f"\n(Or: {ANSWER_INSTRUCTION_LOWER})"
    )
    metadata = {"n": n, "k": 1, "region_nums": n, "region_grid": region, "solution": None}
    return Puzzle(NAME, question, _answer_text(stars, region), difficulty, metadata)


def _parts(puzzle: Puzzle) -> tuple[list[list[str]], int]:
    n, k, region = require(puzzle.metadata, NAME, "n", "k", "region_grid")
    if type(n) is not int or not 2 <= n <= 26 or type(k) is not int or not 1 <= k <= n // 2 + 1:
        raise PuzzleDataError(f"{NAME} metadata 'n' must be 2 to 26 and 'k' from 1 to n/2 + 1")
    if (
        not isinstance(region, list)
        or len(region) != n
        or not all(
            isinstance(row, list) and len(row) == n and all(isinstance(v, str) for v in row)
            for row in region
        )
    ):
        raise PuzzleDataError(f"{NAME} metadata 'region_grid' must be {n} lists of {n} letters")
    return region, k


def check(puzzle: Puzzle) -> None:
    _parts(puzzle)


_ASSIGNMENT = re.compile(r"^\s*[A-Za-z_]\w*\s*=\s*")


def read_stars(block: str) -> list[tuple[int, int]]:
    """The 1-based cells of a ``{letter: [(r, c), ...]}`` dictionary (optionally assigned to a
    name), or of a plain list of pairs; ``AnswerError`` for anything else."""
    text = _ASSIGNMENT.sub("", block, count=1).strip()
    if not text.startswith("{"):
        return parse_cells(block)
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return parse_cells(block)  # {(1, 2), (3, 4)} and other written forms of pairs
    if not isinstance(node, ast.Dict):
        return parse_cells(block)
    cells: list[tuple[int, int]] = []
    for key, value in zip(node.keys, node.values, strict=True):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            raise AnswerError("dictionary keys must be region letters")
        if not isinstance(value, ast.List | ast.Tuple):
            raise AnswerError("each region holds a list of (row, column) pairs")
        for pair in value.elts:
            if not (
                isinstance(pair, ast.Tuple | ast.List)
                and len(pair.elts) == 2
                and all(
                    isinstance(v, ast.Constant) and type(v.value) is int and 0 <= v.value < 100
                    for v in pair.elts
                )
            ):
                raise AnswerError("each star is a (row, column) pair of small integers")
            cells.append((pair.elts[0].value, pair.elts[1].value))  # type: ignore[attr-defined]
    return cells


def verify(puzzle: Puzzle, text: str) -> float:
    region, k = _parts(puzzle)
    n = len(region)
    # AnswerError (a 0) for no pairs, or anything besides them.
    stars = [(r - 1, c - 1) for r, c in read_stars(answer_block(text))]
    if len(set(stars)) != len(stars) or any(not (0 <= r < n and 0 <= c < n) for r, c in stars):
        return 0.0
    rows = [sum(r == i for r, _ in stars) for i in range(n)]
    cols = [sum(c == j for _, c in stars) for j in range(n)]
    if any(v != k for v in rows + cols):
        return 0.0
    letters = {ch for row in region for ch in row}
    if any(sum(region[r][c] == ch for r, c in stars) != k for ch in letters):
        return 0.0
    for i, (r1, c1) in enumerate(stars):
        for r2, c2 in stars[i + 1 :]:
            if abs(r1 - r2) <= 1 and abs(c1 - c2) <= 1:
                return 0.0
    return 1.0
