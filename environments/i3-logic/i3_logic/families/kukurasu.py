"""Kukurasu: place 1s in a grid so that weighted row and column sums match the clues.

A 1 in column j (from 1) adds j to its row's sum; a 1 in row i (from 1) adds i to its column's
sum; every other cell is ``X``. SynLogic's layout (``games/tasks/kukurasu``): ``metadata.n`` x
``metadata.m`` grid, ``row_sums``, ``col_sums``, the blank ``grid`` and one ``solution`` (cells
``"1"`` / ``"X"``), ``ones_probability``; ``answer`` is empty. The prompt asks for the grid as a
Python list of lists of ``"1"`` and ``"X"`` strings.

The verifier checks the sums, so any grid that fits scores 1. A cell is ``"1"`` or ``"X"``
(also unquoted, or ``0`` for ``X``). The generator (4x4 / 5x5 / 6x6) writes the same layout,
keeps upstream's rule that no sum is 0, and stores its solution as the answer.
"""

from __future__ import annotations

import json
import random
import re

from i3_logic.answers import clean, list_answer_block
from i3_logic.puzzle import (
    ANSWER_INSTRUCTION_LOWER,
    AnswerError,
    Puzzle,
    PuzzleDataError,
    grid_lines,
    literal_rows,
    require,
    trace_id,
)

NAME = "kukurasu"
ALIASES = ()
LEVELS = {1: 4, 2: 5, 3: 6}
MAX_SIZE = 30
ONES_PROBABILITY = 0.3


def sums(grid: list[list[int]]) -> tuple[list[int], list[int]]:
    """Weighted row and column sums of a 0/1 grid."""
    n_rows, n_cols = len(grid), len(grid[0])
    rows = [sum(c + 1 for c in range(n_cols) if grid[r][c]) for r in range(n_rows)]
    cols = [sum(r + 1 for r in range(n_rows) if grid[r][c]) for c in range(n_cols)]
    return rows, cols


_CELLS = {"1": 1, "X": 0, "x": 0, "0": 0}
_RULE = re.compile(r"[\s\-+=|]*")
_SPLIT = re.compile(r"[\s,|\[\]\"']+")
_LABEL = re.compile(r"^\s*(?:row\s*\d+|r\d+)\s*[:.)=-]\s*", re.IGNORECASE)


def read_grid(block: str, rows: int, cols: int) -> list[list[int]]:
    """A rows x cols grid of ``1`` and ``X`` (or ``0``): a list literal of strings or numbers,
    or one row per line (or rows separated by ``;``), cells separated by spaces, commas, ``|``
    or brackets, or run together. ``AnswerError`` otherwise."""
    block = clean(block)
    tokens: list[list[str]] | None = None
    if block.startswith("["):
        value = literal_rows(block)  # None: e.g. one [1, 0, 1] list per line, read below
        if value is not None:
            tokens = [[str(v) for v in r] for r in value]
    if tokens is None:
        tokens = []
        for line in grid_lines(block):
            if _RULE.fullmatch(line):
                continue  # blank lines and table rules
            cells = [c for c in _SPLIT.split(_LABEL.sub("", line)) if c]
            if len(cells) == 1 and len(cells[0]) == cols > 1:
                cells = list(cells[0])  # "1XX1": cells written together
            tokens.append(cells)
    if len(tokens) != rows or any(len(r) != cols for r in tokens):
        raise AnswerError(f"grid must be {rows} x {cols}")
    if any(v not in _CELLS for r in tokens for v in r):
        raise AnswerError("cells must be 1 or X")
    return [[_CELLS[v] for v in r] for r in tokens]


def _clues(puzzle: Puzzle) -> tuple[list[int], list[int]]:
    rows, cols = require(puzzle.metadata, NAME, "row_sums", "col_sums")
    for name, values in (("row_sums", rows), ("col_sums", cols)):
        if (
            not isinstance(values, list)
            or not 1 <= len(values) <= MAX_SIZE
            or any(type(v) is not int or v < 0 for v in values)
        ):
            raise PuzzleDataError(f"{NAME} metadata {name!r} must be a list of integers >= 0")
    for key, want in (("n", len(rows)), ("m", len(cols))):
        if key in puzzle.metadata and puzzle.metadata[key] != want:
            raise PuzzleDataError(f"{NAME} metadata {key!r} does not match the number of sums")
    return rows, cols


def check(puzzle: Puzzle) -> None:
    _clues(puzzle)


def verify(puzzle: Puzzle, text: str) -> float:
    rows, cols = _clues(puzzle)
    grid = read_grid(list_answer_block(text), len(rows), len(cols))
    return 1.0 if sums(grid) == (rows, cols) else 0.0


def generate(rng: random.Random, difficulty: int) -> Puzzle:
    n = m = LEVELS[difficulty]
    while True:  # upstream keeps only puzzles without a zero sum
        ones = [[int(rng.random() < ONES_PROBABILITY) for _ in range(m)] for _ in range(n)]
        row_sums, col_sums = sums(ones)
        if 0 not in row_sums and 0 not in col_sums:
            break
    solution = [["1" if v else "X" for v in row] for row in ones]
    blank = [["X"] * m for _ in range(n)]
    shown = "\n".join("  ".join(row) + f"  |  {s}" for row, s in zip(blank, row_sums, strict=True))
    shown += "\n" + "-" * (3 * m + 5) + "\n" + " ".join(f"{s:2d}" for s in col_sums)
    question = (
        f"This is a {n} x {m} Kukurasu puzzle. Put a 1 in some cells and leave X in the "
        "others. A 1 in column j (counted from 1, left to right) adds j to its row's weighted "
        "sum; a 1 in row i (counted from 1, top to bottom) adds i to its column's weighted sum. "
        f"Every row's sum must equal its clue, row_sums = {row_sums}, and every column's sum "
        f"its clue, col_sums = {col_sums}.\n\n{shown}\n\n"
        'Output the finished grid as a Python list of lists of "1" and "X" strings, e.g. '
        '[["X", "1"], ["1", "X"]] for a 2 x 2 grid. '
        f"(Or: {ANSWER_INSTRUCTION_LOWER})"
    )
    metadata = {
        "trace_id": trace_id(rng),
        "grid": blank,
        "row_sums": row_sums,
        "col_sums": col_sums,
        "solution": solution,
        "n": n,
        "m": m,
        "ones_probability": ONES_PROBABILITY,
    }
    return Puzzle(NAME, question, json.dumps(solution), difficulty, metadata)
