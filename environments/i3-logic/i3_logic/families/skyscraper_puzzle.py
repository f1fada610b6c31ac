"""Skyscrapers: a Latin square of building heights with visibility clues around the edge.

A clue says how many buildings are visible from that side of its row or column (a taller
building hides every shorter one behind it). Level 1 is 4x4 with every clue, level 2 5x5 with
most clues, level 3 6x6 with about two thirds of the clues (0 = no clue). The verifier checks
the Latin property and every clue, so any grid that fits scores 1.
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
    is_latin,
    parse_grid,
    random_latin_square,
    require,
)

NAME = "skyscraper_puzzle"
ALIASES = ("skyscrapers",)
LEVELS = {1: (4, 1.0), 2: (5, 0.85), 3: (6, 0.65)}  # size, share of clues shown
SIDES = ("top", "bottom", "left", "right")


def visible(line: list[int]) -> int:
    count, tallest = 0, 0
    for h in line:
        if h > tallest:
            count, tallest = count + 1, h
    return count


def clues_of(grid: list[list[int]]) -> dict[str, list[int]]:
    n = len(grid)
    columns = [[grid[r][c] for r in range(n)] for c in range(n)]
    return {
        "top": [visible(col) for col in columns],
        "bottom": [visible(col[::-1]) for col in columns],
        "left": [visible(row) for row in grid],
        "right": [visible(row[::-1]) for row in grid],
    }


def generate(rng: random.Random, difficulty: int) -> Puzzle:
    n, share = LEVELS[difficulty]
    solution = random_latin_square(rng, n)
    clues = clues_of(solution)
    for side in SIDES:
        clues[side] = [v if rng.random() < share else 0 for v in clues[side]]

    def fmt(values: list[int]) -> str:
        return " ".join(str(v) if v else "-" for v in values)

    question = (
        f"Solve this {n}x{n} Skyscrapers puzzle. Put a building of height 1 to {n} in every "
        "cell so that each row and each column contains every height exactly once. A clue is "
        "the number of buildings visible from that side, looking along the row or column; a "
        "taller building hides all shorter ones behind it. '-' means no clue.\n\n"
        f"Top clues (columns left to right): {fmt(clues['top'])}\n"
        f"Bottom clues (columns left to right): {fmt(clues['bottom'])}\n"
        f"Left clues (rows top to bottom): {fmt(clues['left'])}\n"
        f"Right clues (rows top to bottom): {fmt(clues['right'])}\n\n"
        f"The answer is the completed grid: {n} lines, each with {n} heights separated by spaces.\n"
        f"{ANSWER_INSTRUCTION}"
    )
    metadata = {"size": n, **clues, "solution": solution}
    return Puzzle(NAME, question, format_grid(solution), difficulty, metadata)


def _parts(puzzle: Puzzle) -> tuple[int, dict[str, list[int]]]:
    n, *sides = require(puzzle.metadata, NAME, "size", *SIDES)
    if type(n) is not int or n < 2:
        raise PuzzleDataError(f"{NAME} metadata 'size' must be an integer >= 2")
    for side, values in zip(SIDES, sides, strict=True):
        if (
            not isinstance(values, list)
            or len(values) != n
            or any(type(v) is not int or not 0 <= v <= n for v in values)
        ):
            raise PuzzleDataError(f"{NAME} metadata {side!r} must be {n} clues from 0 to {n}")
    return n, dict(zip(SIDES, sides, strict=True))


def check(puzzle: Puzzle) -> None:
    _parts(puzzle)


def verify(puzzle: Puzzle, text: str) -> float:
    n, clues = _parts(puzzle)
    try:
        grid = parse_grid(answer_block(text), n, n)
    except AnswerError:
        return 0.0
    if not is_latin(grid, n):
        return 0.0
    actual = clues_of(grid)
    for side in SIDES:
        if any(want and want != got for want, got in zip(clues[side], actual[side], strict=True)):
            return 0.0
    return 1.0
