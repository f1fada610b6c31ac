"""Futoshiki: a Latin square with some digits given and inequalities between neighbours.

Fill an n x n grid with 1..n so each row and column holds each digit once, keeping the given
digits and every ``<`` constraint. Level 1 is 4x4, level 2 5x5, level 3 6x6. Puzzles come from
a random Latin square (so they are solvable); the verifier checks the constraints, so any valid
grid scores 1.
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
    int_grid,
    is_latin,
    parse_grid,
    random_latin_square,
    require,
)

NAME = "futoshiki"
ALIASES = ()
LEVELS = {1: (4, 4, 4), 2: (5, 5, 6), 3: (6, 6, 9)}  # size, givens, inequalities


def generate(rng: random.Random, difficulty: int) -> Puzzle:
    n, n_givens, n_ineq = LEVELS[difficulty]
    solution = random_latin_square(rng, n)
    cells = [(r, c) for r in range(n) for c in range(n)]
    givens = [[0] * n for _ in range(n)]
    for r, c in rng.sample(cells, n_givens):
        givens[r][c] = solution[r][c]
    pairs = [((r, c), (r, c + 1)) for r in range(n) for c in range(n - 1)]
    pairs += [((r, c), (r + 1, c)) for r in range(n - 1) for c in range(n)]
    inequalities = []
    for a, b in rng.sample(pairs, n_ineq):
        lo, hi = (a, b) if solution[a[0]][a[1]] < solution[b[0]][b[1]] else (b, a)
        inequalities.append([lo[0], lo[1], hi[0], hi[1]])
    shown = "\n".join(" ".join(str(v) if v else "_" for v in row) for row in givens)
    rules = "\n".join(f"R{r1 + 1}C{c1 + 1} < R{r2 + 1}C{c2 + 1}" for r1, c1, r2, c2 in inequalities)
    question = (
        f"Solve this {n}x{n} Futoshiki. Fill every blank (_) with a digit from 1 to {n} so that "
        "each row and each column contains every digit exactly once, and every inequality "
        "holds (RrCc is the cell in row r, column c, counted from 1).\n\n"
        f"{shown}\n\nInequalities:\n{rules}\n\n"
        f"The answer is the completed grid: {n} lines, each with {n} digits separated by spaces.\n"
        f"{ANSWER_INSTRUCTION}"
    )
    metadata = {"size": n, "givens": givens, "inequalities": inequalities, "solution": solution}
    return Puzzle(NAME, question, format_grid(solution), difficulty, metadata)


def _parts(puzzle: Puzzle) -> tuple[int, list[list[int]], list[list[int]]]:
    n, givens, inequalities = require(puzzle.metadata, NAME, "size", "givens", "inequalities")
    if type(n) is not int or n < 2:
        raise PuzzleDataError(f"{NAME} metadata 'size' must be an integer >= 2")
    int_grid(givens, NAME, "givens", n, n)
    if not isinstance(inequalities, list) or not all(
        isinstance(q, list) and len(q) == 4 and all(type(v) is int and 0 <= v < n for v in q)
        for q in inequalities
    ):
        raise PuzzleDataError(f"{NAME} metadata 'inequalities' must be [r1, c1, r2, c2] cells")
    return n, givens, inequalities


def check(puzzle: Puzzle) -> None:
    _parts(puzzle)


def verify(puzzle: Puzzle, text: str) -> float:
    n, givens, inequalities = _parts(puzzle)
    try:
        grid = parse_grid(answer_block(text), n, n)
    except AnswerError:
        return 0.0
    if not is_latin(grid, n):
        return 0.0
    if any(givens[r][c] and givens[r][c] != grid[r][c] for r in range(n) for c in range(n)):
        return 0.0
    return 1.0 if all(grid[a][b] < grid[c][d] for a, b, c, d in inequalities) else 0.0
