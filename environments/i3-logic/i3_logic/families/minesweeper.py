"""Minesweeper: place the mines so that every revealed number is right.

A board has revealed cells (the number of mines among their up-to-eight neighbours) and hidden
cells (``?``); the total number of mines is given. Level 1 is 5x5 with 4 mines, level 2 6x6
with 7, level 3 8x8 with 12 (fewer revealed cells as the level rises). The answer lists the
mine cells as ``(row, column)`` pairs numbered from 1. The verifier checks the constraints:
mines only on hidden cells, the right total, and every revealed number matched, so any
placement consistent with the board scores 1.
"""

from __future__ import annotations

import random

from i3_logic.answers import answer_block, parse_cells
from i3_logic.puzzle import (
    ANSWER_INSTRUCTION,
    AnswerError,
    Puzzle,
    PuzzleDataError,
    require,
)

NAME = "minesweeper"
ALIASES = ()
LEVELS = {1: (5, 4, 0.75), 2: (6, 7, 0.65), 3: (8, 12, 0.55)}  # size, mines, share revealed


def neighbours(r: int, c: int, rows: int, cols: int) -> list[tuple[int, int]]:
    return [
        (r + dr, c + dc)
        for dr in (-1, 0, 1)
        for dc in (-1, 0, 1)
        if (dr or dc) and 0 <= r + dr < rows and 0 <= c + dc < cols
    ]


def generate(rng: random.Random, difficulty: int) -> Puzzle:
    size, mines, share = LEVELS[difficulty]
    cells = [(r, c) for r in range(size) for c in range(size)]
    mine_cells = sorted(rng.sample(cells, mines))
    mine_set = set(mine_cells)
    safe = [cell for cell in cells if cell not in mine_set]
    revealed = set(rng.sample(safe, round(share * len(safe))))
    board = [
        [
            sum(n in mine_set for n in neighbours(r, c, size, size)) if (r, c) in revealed else -1
            for c in range(size)
        ]
        for r in range(size)
    ]
    shown = "\n".join(" ".join("?" if v < 0 else str(v) for v in row) for row in board)
    answer = ", ".join(f"({r + 1}, {c + 1})" for r, c in mine_cells)
    question = (
        f"This {size}x{size} Minesweeper board has exactly {mines} mines. A number is a revealed "
        "cell without a mine and tells how many of its (up to eight) neighbouring cells hold a "
        "mine; ? is a hidden cell, which may or may not hold a mine.\n\n"
        f"{shown}\n\n"
        "Find a placement of all the mines that agrees with every number. List the mine cells as "
        "(row, column) pairs, numbered from 1 starting at the top-left, e.g. (1, 2), (3, 1).\n"
        f"{ANSWER_INSTRUCTION}"
    )
    metadata = {"board": board, "mines": mines, "solution": [[r, c] for r, c in mine_cells]}
    return Puzzle(NAME, question, answer, difficulty, metadata)


def _board(puzzle: Puzzle) -> tuple[list[list[int]], int]:
    board, mines = require(puzzle.metadata, NAME, "board", "mines")
    if (
        not isinstance(board, list)
        or not board
        or not all(isinstance(r, list) and len(r) == len(board[0]) for r in board)
        or not all(type(v) is int and -1 <= v <= 8 for r in board for v in r)
        or type(mines) is not int
        or mines < 0
    ):
        raise PuzzleDataError(f"{NAME} metadata: 'board' must be a grid of -1..8, 'mines' an int")
    return board, mines


def check(puzzle: Puzzle) -> None:
    _board(puzzle)


def verify(puzzle: Puzzle, text: str) -> float:
    board, mines = _board(puzzle)
    rows, cols = len(board), len(board[0])
    try:
        pairs = [(r - 1, c - 1) for r, c in parse_cells(answer_block(text))]
    except AnswerError:
        return 0.0  # no pairs, or anything besides them
    placed = set(pairs)
    if len(placed) != len(pairs) or len(placed) != mines:
        return 0.0
    if any(not (0 <= r < rows and 0 <= c < cols) or board[r][c] >= 0 for r, c in placed):
        return 0.0
    for r in range(rows):
        for c in range(cols):
            if (
                board[r][c] >= 0
                and sum(n in placed for n in neighbours(r, c, rows, cols)) != board[r][c]
            ):
                return 0.0
    return 1.0
