"""Sudoku: fill the grid so every row, column and box holds each digit once.

SynLogic's layout (``games/tasks/sudoku``): ``metadata.original_sudoku`` is the 9x9 puzzle with
``"X"`` (or ``0``) for a blank, ``metadata.complete_sudoku`` the solution; ``answer`` is the
solution written as a tuple of row tuples. The prompt asks for that tuple in a ```` ```python ````
block at the end of the reply. The verifier checks the rules and the given clues (so any valid
completion scores 1), not the stored solution.

The generator makes 4x4 (2x2 boxes), 6x6 (2x3) and 9x9 (3x3) puzzles for levels 1-3 in the same
layout: it shuffles a complete grid and removes clues one at a time, keeping a removal only while
a solver still finds exactly one solution. SynLogic's own puzzles are all 9x9.
"""

from __future__ import annotations

import random
from typing import Any

from i3_logic.answers import clean, list_answer_block
from i3_logic.puzzle import (
    ANSWER_INSTRUCTION_LOWER,
    MAX_ANSWER_CHARS,
    AnswerError,
    Puzzle,
    PuzzleDataError,
    final_answer,
    literal_grid,
    parse_grid,
    require,
    trace_id,
)

NAME = "sudoku"
ALIASES = ()
LEVELS = {1: (2, 2, 6), 2: (2, 3, 14), 3: (3, 3, 30)}  # box rows, box cols, clue floor
BOXES = {4: (2, 2), 6: (2, 3), 9: (3, 3)}
BLANKS = (0, "X", "x")  # upstream writes "X"; 0 is read as blank too (as upstream does)


def _box(r: int, c: int, br: int, bc: int) -> int:
    n = br * bc
    return (r // br) * (n // bc) + c // bc


def count_solutions(grid: list[list[Any]], br: int, bc: int, limit: int = 2) -> int:
    """Number of completions of ``grid`` (blanks ``0``/``"X"``), counting up to ``limit``."""
    n = br * bc
    full = (1 << (n + 1)) - 2
    rows, cols, boxes = [0] * n, [0] * n, [0] * n
    empty = []
    for r in range(n):
        for c in range(n):
            v = grid[r][c]
            if v in BLANKS:
                empty.append((r, c, _box(r, c, br, bc)))
                continue
            bit = 1 << int(v)
            b = _box(r, c, br, bc)
            if rows[r] & bit or cols[c] & bit or boxes[b] & bit:
                return 0
            rows[r] |= bit
            cols[c] |= bit
            boxes[b] |= bit

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


def as_tuple_text(grid: list[list[int]]) -> str:
    """The answer as SynLogic writes it: ``str`` of a tuple of row tuples."""
    return str(tuple(tuple(row) for row in grid))


def generate(rng: random.Random, difficulty: int) -> Puzzle:
    br, bc, floor = LEVELS[difficulty]
    n = br * bc
    solution = _full_grid(rng, br, bc)
    puzzle: list[list[Any]] = [row[:] for row in solution]
    cells = [(r, c) for r in range(n) for c in range(n)]
    rng.shuffle(cells)
    clues = n * n
    for r, c in cells:
        if clues <= floor:
            break
        keep = puzzle[r][c]
        puzzle[r][c] = "X"
        if count_solutions(puzzle, br, bc) == 1:
            clues -= 1
        else:
            puzzle[r][c] = keep
    shown = "\n".join("".join(str(v) for v in row) for row in puzzle)
    example = f"((1,2,...,{n}),(...),...)"
    question = (
        f"Solve this {n}x{n} Sudoku; X marks a cell to fill:\n{shown}\n\n"
        f"Every row, every column and every {br}x{bc} box ({br} rows by {bc} columns) must "
        f"contain each digit from 1 to {n} exactly once.\n\n"
        "Give the completed grid at the end of your reply as a tuple of row tuples in a Python "
        f"code block, for example ```python\n{example}\n```\n"
        f"(or: {ANSWER_INSTRUCTION_LOWER})"
    )
    metadata = {
        "trace_id": trace_id(rng),
        "original_sudoku": puzzle,
        "complete_sudoku": solution,
        "difficulty": difficulty,
        "unique_solution": True,
    }
    return Puzzle(NAME, question, as_tuple_text(solution), difficulty, metadata)


def _clue(value: Any, n: int) -> int:
    """A clue cell as an int (0 = blank); ``PuzzleDataError`` for anything else."""
    if value in BLANKS:
        return 0
    if isinstance(value, str) and value.isascii() and value.isdigit():
        value = int(value)  # upstream converts clues with int()
    if type(value) is not int or not 1 <= value <= n:
        raise PuzzleDataError(f"{NAME} metadata: clues must be 1 to {n}, 'X' or 0; got {value!r}")
    return value


def _shape(puzzle: Puzzle) -> tuple[list[list[int]], int, int]:
    (given,) = require(puzzle.metadata, NAME, "original_sudoku")
    n = len(given) if isinstance(given, list) else 0
    if n not in BOXES or any(not isinstance(r, list) or len(r) != n for r in given):
        raise PuzzleDataError(
            f"{NAME} metadata: original_sudoku must be a 4x4, 6x6 or 9x9 list of rows "
            "(grid size and box shape do not match)"
        )
    br, bc = BOXES[n]
    return [[_clue(v, n) for v in row] for row in given], br, bc


def check(puzzle: Puzzle) -> None:
    _shape(puzzle)


def _last_paren_literal(text: str) -> str:
    """The last ``((...), ...)`` in a reply (upstream's fallback for a tuple written without
    the code block); ``AnswerError`` when there is none."""
    if text.lower().rfind("<answer>") > text.lower().rfind("</answer>"):
        raise AnswerError("an <answer> tag is never closed")
    end = text.rfind("))") + 1
    depth = 0
    for i in range(end, -1, -1) if end > 0 else ():
        depth += {")": 1, "(": -1}.get(text[i], 0)
        if depth == 0:
            if end + 1 - i > MAX_ANSWER_CHARS:
                raise AnswerError("answer too long")
            return text[i : end + 1]
    raise AnswerError("no tuple of rows in the reply")


def read_grid(text: str, n: int) -> list[list[int]]:
    """The n x n grid a reply gives: its final answer block (a ```python block, answer tags,
    ...) or, without one, the last list or tuple of rows in it (whichever ends later); read as
    a tuple or list literal or in the grid forms of ``parse_grid``."""
    if final_answer(text) or text.rfind("]") > text.rfind("))"):
        block = list_answer_block(text)
    else:
        block = _last_paren_literal(text)
    block = clean(block)
    if block.startswith("("):
        value = literal_grid(block, n, n)  # ((1, 2, ...), ...): tuples read as lists
        if any(type(v) is not int for r in value for v in r):
            raise AnswerError(f"grid must be {n} x {n} integers")
        return value
    return parse_grid(block, n, n)


def verify(puzzle: Puzzle, text: str) -> float:
    given, br, bc = _shape(puzzle)
    n = br * bc
    grid = read_grid(text, n)
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
