"""Skyscrapers (SynLogic's ``skyscraper_puzzle``): a Latin square of heights seen from the edges.

Each clue says how many buildings are visible from that side of its row or column (a taller
building hides every shorter one behind it). SynLogic's metadata: ``n``, the clue lists
``top``, ``bottom`` (columns left to right), ``left``, ``right`` (rows top to bottom), every
clue given, and ``solved_grid``. Level 1 is 4x4, level 2 5x5, level 3 6x6.

The answer is the grid as a 2D Python list in a ```` ```python ```` block at the end of the reply
(other grid forms of ``i3_logic.answers`` and a bare list at the end are read too). The verifier
checks the Latin property and every clue (upstream's check), so any grid that fits scores 1.
"""

from __future__ import annotations

import random

from i3_logic.answers import int_grid_answer
from i3_logic.puzzle import (
    ANSWER_INSTRUCTION_LOWER,
    Puzzle,
    PuzzleDataError,
    is_latin,
    random_latin_square,
    require,
)

NAME = "skyscraper_puzzle"
ALIASES = ()
LEVELS = {1: 4, 2: 5, 3: 6}
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


def layout(n: int, clues: dict[str, list[int]]) -> str:
    """The board as SynLogic draws it: top clues above, left and right beside, bottom below."""
    pad = " " * 6
    lines = [pad + "   ".join(map(str, clues["top"]))]
    for r in range(n):
        lines.append(f"{clues['left'][r]}     " + "   ".join("X" * n) + f"   {clues['right'][r]}")
    lines.append(pad + "   ".join(map(str, clues["bottom"])))
    return "\n".join(lines)


def generate(rng: random.Random, difficulty: int) -> Puzzle:
    n = LEVELS[difficulty]
    solution = random_latin_square(rng, n)
    clues = clues_of(solution)
    question = (
        f"Solve this {n}x{n} Skyscraper puzzle. Put a skyscraper of height 1 to {n} in every "
        "cell so that no height repeats in a row or a column. Each number around the grid says "
        "how many skyscrapers are visible looking from that side along its row or column; a "
        "taller skyscraper hides every shorter one behind it. X marks a cell to fill.\n\n"
        f"{layout(n, clues)}\n\n"
        "Reason first if you like, then end your reply with a ```python code block that holds "
        "only the completed grid as a 2D list, one inner list per row, for example:\n"
        "```python\n[[1, 2], [2, 1]]\n```"
        f"\n(Or: {ANSWER_INSTRUCTION_LOWER})"
    )
    metadata = {"n": n, "solved_grid": solution, **clues}
    # SynLogic leaves ``answer`` empty; a generated puzzle keeps its solution there (unread).
    return Puzzle(NAME, question, str(solution), difficulty, metadata)


def _parts(puzzle: Puzzle) -> tuple[int, dict[str, list[int]]]:
    n, *sides = require(puzzle.metadata, NAME, "n", *SIDES)
    if type(n) is not int or not 2 <= n <= 12:
        raise PuzzleDataError(f"{NAME} metadata 'n' must be an integer from 2 to 12")
    for side, values in zip(SIDES, sides, strict=True):
        if (
            not isinstance(values, list)
            or len(values) != n
            or any(type(v) is not int or not 1 <= v <= n for v in values)
        ):
            raise PuzzleDataError(f"{NAME} metadata {side!r} must be {n} clues from 1 to {n}")
    return n, dict(zip(SIDES, sides, strict=True))


def check(puzzle: Puzzle) -> None:
    _parts(puzzle)


def verify(puzzle: Puzzle, text: str) -> float:
    n, clues = _parts(puzzle)
    grid = int_grid_answer(text, n, n)
    if not is_latin(grid, n):
        return 0.0
    return 1.0 if clues_of(grid) == clues else 0.0
