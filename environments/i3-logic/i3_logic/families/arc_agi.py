"""ARC-AGI (1 and 2): the output grid of an abstraction task, as a JSON list of rows.

The row's ``answer`` is the test output grid, a list of rows of integers 0-9 (a JSON array in
the game data, or its text). The prompt asks for the grid in a fenced ```` ```json ```` block;
the last such block is read (else the final answer block of ``i3_logic.puzzle.final_answer``,
else a reply that is a bare ``[[...]]``), parsed as JSON or as a literal by a literal-only
parser (upstream ran ``eval`` on it), and must equal the reference grid exactly (``true`` is not
``1``). Upstream skips both tasks by default (``tasks_to_skip``); they are verified here when
loaded. Upstream compared the parsed reply with the game data's ``answer`` as given, so a row
whose answer is the grid's text could never score; here the reference is parsed too.
"""

from __future__ import annotations

from typing import Any

from i3_logic.families.bbh_common import parsed_reference
from i3_logic.families.zebra_puzzle import reply_block, same, structured
from i3_logic.puzzle import MAX_ANSWER_CHARS, Puzzle

NAME = "arc_agi"
ALIASES = ("arc_agi_2",)
#: ARC grids go up to 30x30; pretty-printed JSON of one is ~9 characters a cell.
MAX_CHARS = 4 * MAX_ANSWER_CHARS


def is_grid(value: Any) -> bool:
    return (
        isinstance(value, list)
        and len(value) > 0
        and all(isinstance(row, list) and row for row in value)
        and all(type(v) is int for row in value for v in row)
    )


def _reference_grid(answer: str) -> list[list[int]] | None:
    value = structured(answer, 10 * MAX_CHARS)
    return value if is_grid(value) else None


def _reference(puzzle: Puzzle) -> list[list[int]]:
    return parsed_reference(puzzle, _reference_grid, "a grid (list of int rows)")


def check(puzzle: Puzzle) -> None:
    _reference(puzzle)


def verify(puzzle: Puzzle, text: str) -> float:
    want = _reference(puzzle)
    block = reply_block(text, "[")
    given = structured(block, MAX_CHARS) if block else None
    return 1.0 if is_grid(given) and same(want, given) else 0.0
