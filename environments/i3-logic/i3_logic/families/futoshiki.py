"""Futoshiki: a Latin square with some digits given and inequalities between neighbours.

SynLogic's layout (``games/tasks/futoshiki``): ``metadata.grid_size`` n, ``prefilled_coords``
(``[row, col]`` from 0), ``constraints`` (``[[r1, c1], [r2, c2], ">" or "<"]``, cells from 0),
``num_inequality_signs``, ``num_prefilled_coords``; ``answer`` is the solution grid. The
metadata holds no prefilled *values*: as upstream, they are read from the grid under "Current
puzzle:" in the game data's question (``X`` = blank). The prompt asks for the grid in double
square brackets, rows separated by commas: ``[[1 2 3,2 3 1,3 1 2]]``.

The verifier checks the rules (Latin square, prefilled digits, every inequality), so any valid
grid scores 1. The generator (4x4 / 5x5 / 6x6) writes the same layout, from a random Latin
square, with every sign true of it (upstream's generator draws signs at random, so some of its
puzzles have no solution).
"""

from __future__ import annotations

import random
import re
from typing import Any

from i3_logic.answers import clean, list_answer_block
from i3_logic.puzzle import (
    ANSWER_INSTRUCTION_LOWER,
    AnswerError,
    Puzzle,
    PuzzleDataError,
    is_latin,
    parse_grid,
    random_latin_square,
    require,
)

NAME = "futoshiki"
ALIASES = ()
LEVELS = {1: (4, 3, 5), 2: (5, 4, 8), 3: (6, 5, 12)}  # size, prefilled cells, inequalities
MAX_SIZE = 12

_DOUBLE = re.compile(r"\[\[([^\[\]]*)\]\]")


def bracket_text(grid: list[list[int]]) -> str:
    """A grid in SynLogic's answer form: ``[[1 2 3,2 3 1,3 1 2]]``."""
    return "[[" + ",".join(" ".join(map(str, row)) for row in grid) + "]]"


def latin_answer(text: str, n: int) -> list[list[int]] | None:
    """The reply's n x n grid (`bracket_grid`) when it is a Latin square, else None."""
    try:
        grid = bracket_grid(text, n)
    except AnswerError:
        return None
    return grid if is_latin(grid, n) else None


def bracket_grid(text: str, n: int) -> list[list[int]]:
    """The n x n grid of a reply whose prompt asks for ``[[A B C,D E F,G H I]]``: its final
    answer block or, without one, the last bracketed list in it. The block is that form (cells
    separated by spaces, rows by commas), a nested list literal, or one row per line (the forms
    of ``parse_grid``). ``AnswerError`` otherwise."""
    block = clean(list_answer_block(text))
    m = _DOUBLE.fullmatch(block)
    if m:
        rows = [row.split() for row in m.group(1).replace("\uff0c", ",").split(",")]
        # "[[1, 2, 3]]" (one row of comma-separated numbers) is not this form: a list literal.
        if len(rows) == n and all(len(r) == n for r in rows):
            if not all(v.isascii() and v.isdigit() for r in rows for v in r):
                raise AnswerError("cells must be numbers")
            return [[int(v) for v in r] for r in rows]
    return parse_grid(block, n, n)


def _grid_lines(question: str, n: int) -> list[list[str]] | None:
    """The first n consecutive lines of n cells (``X`` or a number) in the question: the
    puzzle grid. Found by shape, not by the "Current puzzle:" header, so a Chinese prompt or a
    row with no blank is read too (upstream missed both)."""
    cell = re.compile(r"X|\d+")
    run: list[list[str]] = []
    for line in question.splitlines():
        cells = line.split()
        if len(cells) == n and all(cell.fullmatch(c) for c in cells):
            run.append(cells)
            if len(run) == n:
                return run
        else:
            run = []
    return None


def _answer_grid(answer: str, n: int) -> list[list[int]] | None:
    """The game data's reference solution (a list of rows, or the bracket form), if readable."""
    try:
        return bracket_grid(f"<answer>{answer}</answer>", n) if answer.strip() else None
    except AnswerError:
        return None


Parts = tuple[int, dict[tuple[int, int], int], list[tuple[int, int, int, int, str]]]


def _parts(puzzle: Puzzle) -> Parts:
    n, coords, constraints = require(
        puzzle.metadata, NAME, "grid_size", "prefilled_coords", "constraints"
    )
    if type(n) is not int or not 2 <= n <= MAX_SIZE:
        raise PuzzleDataError(f"{NAME} metadata 'grid_size' must be an integer 2-{MAX_SIZE}")

    def cell(value: Any) -> tuple[int, int]:
        if (
            not isinstance(value, list)
            or len(value) != 2
            or not all(type(v) is int and 0 <= v < n for v in value)
        ):
            raise PuzzleDataError(f"{NAME} metadata: {value!r} is not a [row, col] cell from 0")
        return value[0], value[1]

    if not isinstance(coords, list) or not isinstance(constraints, list):
        raise PuzzleDataError(f"{NAME} metadata: prefilled_coords and constraints must be lists")
    rules = []
    for q in constraints:
        if not isinstance(q, list) or len(q) != 3 or q[2] not in ("<", ">"):
            raise PuzzleDataError(f"{NAME} metadata: constraint {q!r} is not [cell, cell, '<'/'>']")
        (r1, c1), (r2, c2) = cell(q[0]), cell(q[1])
        rules.append((r1, c1, r2, c2, q[2]))
    prefilled: dict[tuple[int, int], int] = {}
    if coords:
        shown = _grid_lines(puzzle.question, n)
        solution = None if shown else _answer_grid(puzzle.answer, n)
        for value in coords:
            r, c = cell(value)
            if shown is not None:
                if shown[r][c] == "X":
                    raise PuzzleDataError(f"{NAME}: prefilled cell {[r, c]} is blank in the grid")
                prefilled[r, c] = int(shown[r][c])
            elif solution is not None:
                prefilled[r, c] = solution[r][c]
            else:
                raise PuzzleDataError(
                    f"{NAME}: the prefilled values are neither in the question's grid nor in "
                    "the answer"
                )
    return n, prefilled, rules


def check(puzzle: Puzzle) -> None:
    _parts(puzzle)


def verify(puzzle: Puzzle, text: str) -> float:
    n, prefilled, rules = _parts(puzzle)
    grid = latin_answer(text, n)
    if grid is None:
        return 0.0
    if any(grid[r][c] != v for (r, c), v in prefilled.items()):
        return 0.0
    for r1, c1, r2, c2, sign in rules:
        a, b = grid[r1][c1], grid[r2][c2]
        if not (a < b if sign == "<" else a > b):
            return 0.0
    return 1.0


def generate(rng: random.Random, difficulty: int) -> Puzzle:
    n, n_prefilled, n_signs = LEVELS[difficulty]
    solution = random_latin_square(rng, n)
    pairs = [((r, c), (r, c + 1)) for r in range(n) for c in range(n - 1)]
    pairs += [((r, c), (r + 1, c)) for r in range(n - 1) for c in range(n)]
    constraints: list[list[Any]] = []
    for (r1, c1), (r2, c2) in rng.sample(pairs, n_signs):
        sign = "<" if solution[r1][c1] < solution[r2][c2] else ">"
        constraints.append([[r1, c1], [r2, c2], sign])
    coords = [
        [r, c] for r, c in rng.sample([(r, c) for r in range(n) for c in range(n)], n_prefilled)
    ]
    shown = [["X"] * n for _ in range(n)]
    for r, c in coords:
        shown[r][c] = str(solution[r][c])
    grid = "\n".join(" ".join(row) for row in shown)
    signs = "\n".join(
        f"({a + 1},{b + 1}) {s} ({c + 1},{d + 1})" for (a, b), (c, d), s in constraints
    )
    question = (
        f"This is a {n}x{n} Futoshiki puzzle. Fill the grid with the numbers 1 to {n} so that "
        "no number repeats in any row or column. Given numbers stay as they are (X marks a "
        "blank), and every inequality below must hold; (i,j) is the cell in row i, column j, "
        "counted from 1.\n\n"
        f"Current puzzle:\n{grid}\n\nInequality constraints:\n{signs}\n\n"
        "Write the solved grid row by row, numbers separated by spaces and rows by commas, "
        "inside double square brackets: a 3x3 grid\nA B C\nD E F\nG H I\nis written "
        f"[[A B C,D E F,G H I]]. (Or: {ANSWER_INSTRUCTION_LOWER})"
    )
    metadata = {
        "grid_size": n,
        "num_inequality_signs": n_signs,
        "num_prefilled_coords": n_prefilled,
        "prefilled_coords": coords,
        "constraints": constraints,
    }
    return Puzzle(NAME, question, bracket_text(solution), difficulty, metadata)
