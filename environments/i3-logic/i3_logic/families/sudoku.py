"""Sudoku: fill the grid so every row, column and box holds each digit once.

Level 1 is 4x4 (2x2 boxes), level 2 6x6 (2x3 boxes), level 3 9x9 (3x3 boxes). The generator
shuffles a complete grid and removes clues one at a time, keeping a removal only while a solver
still finds exactly one solution, so every puzzle is uniquely solvable.

Answer: the completed grid, one row per line (digits separated by spaces) or a nested list.
The verifier checks the constraints and the given clues, not a stored string.
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
    parse_grid,
    require,
)

NAME = "sudoku"
ALIASES = ()
LEVELS = {1: (2, 2, 6), 2: (2, 3, 14), 3: (3, 3, 30)}  # box rows, box cols, clue floor


def _box(r: int, c: int, br: int, bc: int) -> int:
    n = br * bc
    return (r // br) * (n // bc) + c // bc


def count_solutions(grid: list[list[int]], br: int, bc: int, limit: int = 2) -> int:
    """Number of completions of ``grid`` (0 = blank), counting up to ``limit``."""
    n = br * bc
    full = (1 << (n + 1)) - 2
    rows, cols, boxes = [0] * n, [0] * n, [0] * n
    empty = []
    for r in range(n):
        for c in range(n):
            v = grid[r][c]
            if v:
                bit = 1 << v
                b = _box(r, c, br, bc)
                if rows[r] & bit or cols[c] & bit or boxes[b] & bit:
                    return 0
                rows[r] |= bit
                cols[c] |= bit
                boxes[b] |= bit
            else:
                empty.append((r, c, _box(r, c, br, bc)))

    def search(remaining: list[tuple[int, int, int]]) -> int:
        if not remaining:
            return 1
        best_i, best_mask, best_count = -1, 0, n + 1
        for i, (r, c, b) in enumerate(remaining):
            mask = full & ~(rows[r] | cols[c] | boxes[b])
            k = mask.bit_count()
            if k < best_count:
                best_i, best_mask, best_count = i, mask, k
                if k <= 1:
                    break
        if best_count == 0:
            return 0
        r, c, b = remaining[best_i]
        rest = remaining[:best_i] + remaining[best_i + 1 :]
        total = 0
        mask = best_mask
        while mask:
            bit = mask & -mask
            mask ^= bit
            rows[r] |= bit
            cols[c] |= bit
            boxes[b] |= bit
            total += search(rest)
            rows[r] ^= bit
            cols[c] ^= bit
            boxes[b] ^= bit
            if total >= limit:
                break
        return total

    return search(empty)


def _full_grid(rng: random.Random, br: int, bc: int) -> list[list[int]]:
    n = br * bc
    bands = list(range(n // br))
    stacks = list(range(n // bc))
    rng.shuffle(bands)
    rng.shuffle(stacks)
    rows = [b * br + r for b in bands for r in rng.sample(range(br), br)]
    cols = [s * bc + c for s in stacks for c in rng.sample(range(bc), bc)]
    digits = rng.sample(range(1, n + 1), n)
    return [[digits[(bc * (r % br) + r // br + c) % n] for c in cols] for r in rows]


def generate(rng: random.Random, difficulty: int) -> Puzzle:
    br, bc, floor = LEVELS[difficulty]
    n = br * bc
    solution = _full_grid(rng, br, bc)
    puzzle = [row[:] for row in solution]
    cells = [(r, c) for r in range(n) for c in range(n)]
    rng.shuffle(cells)
    clues = n * n
    for r, c in cells:
        if clues <= floor:
            break
        keep = puzzle[r][c]
        puzzle[r][c] = 0
        if count_solutions(puzzle, br, bc) == 1:
            clues -= 1
        else:
            puzzle[r][c] = keep
    shown = "\n".join(" ".join(str(v) if v else "_" for v in row) for row in puzzle)
    question = (
        f"Solve this {n}x{n} Sudoku. Fill every blank (_) with a digit from 1 to {n} so that "
        f"each row, each column and each {br}x{bc} box contains every digit from 1 to {n} "
        f"exactly once. Boxes are {br} rows tall and {bc} columns wide.\n\n{shown}\n\n"
        f"The answer is the completed grid: {n} lines, each with {n} digits separated by spaces.\n"
        f"{ANSWER_INSTRUCTION}"
    )
    metadata = {"original_sudoku": puzzle, "solution": solution, "box_rows": br, "box_cols": bc}
    return Puzzle(NAME, question, format_grid(solution), difficulty, metadata)


def _shape(puzzle: Puzzle) -> tuple[list[list[int]], int, int]:
    (given,) = require(puzzle.metadata, NAME, "original_sudoku")
    n = len(given) if isinstance(given, list) else 0
    default = {4: (2, 2), 6: (2, 3), 9: (3, 3)}.get(n, (0, 0))
    br = puzzle.metadata.get("box_rows", default[0])
    bc = puzzle.metadata.get("box_cols", default[1])
    if not n or type(br) is not int or type(bc) is not int or br * bc != n:
        raise PuzzleDataError(f"{NAME} metadata: grid size and box shape do not match")
    grid = int_grid(given, NAME, "original_sudoku", n, n)
    if any(not 0 <= v <= n for row in grid for v in row):
        raise PuzzleDataError(f"{NAME} metadata: clues must be 0 (blank) to {n}")
    return grid, br, bc


def check(puzzle: Puzzle) -> None:
    _shape(puzzle)


def verify(puzzle: Puzzle, text: str) -> float:
    given, br, bc = _shape(puzzle)
    n = br * bc
    try:
        grid = parse_grid(answer_block(text), n, n)
    except AnswerError:
        return 0.0
    want = set(range(1, n + 1))
    if any(given[r][c] and given[r][c] != grid[r][c] for r in range(n) for c in range(n)):
        return 0.0
    if any(set(row) != want for row in grid):
        return 0.0
    if any({grid[r][c] for r in range(n)} != want for c in range(n)):
        return 0.0
    boxes: dict[int, set[int]] = {}
    for r in range(n):
        for c in range(n):
            boxes.setdefault(_box(r, c, br, bc), set()).add(grid[r][c])
    return 1.0 if all(b == want for b in boxes.values()) else 0.0
