"""Wordscapes (SynLogic): fill a crossword grid with the given across and down words.

The grid marks letter cells ``X`` and empty cells ``0``; the across words read left to right,
the down words top to bottom. SynLogic's metadata: ``grid`` (lists of ``"X"``/``"0"``),
``across_words``, ``down_words``, ``solution`` (letters and ``" "``) and the generator's
settings. The verifier needs only the grid and the word lists (no dictionary).

The answer is the filled grid as ``[["C", "A", "T"], [" ", " ", " "], ...]`` (a space, an empty
string or ``"0"`` for an empty cell; letters unquoted are read too), the last top-level
``[...]`` of a reply without an answer block. It scores 1 when every ``X`` holds one letter,
every ``0`` is empty, each across word appears in some row and each down word in some column.
Stricter than upstream, which joined a row's letters with the gaps removed: a word must lie in
one unbroken run of letters, not across an empty cell.
"""

from __future__ import annotations

import re

from i3_logic.answers import list_answer_block
from i3_logic.puzzle import AnswerError, Puzzle, PuzzleDataError, parse_literal, require

NAME = "wordscapes"
ALIASES = ()
_BLANK = ("", " ", "0")
_ROW = re.compile(r"\[([^\[\]]*)\]")
_TOKEN = re.compile(r"\"([^\"]*)\"|'([^']*)'|([^,\s]+)")


def _parts(puzzle: Puzzle) -> tuple[list[list[str]], list[str], list[str]]:
    grid, across, down = require(puzzle.metadata, NAME, "grid", "across_words", "down_words")
    if (
        not isinstance(grid, list)
        or not grid
        or not all(isinstance(row, list) and len(row) == len(grid[0]) for row in grid)
        or not all(v in ("X", "0") for row in grid for v in row)
    ):
        raise PuzzleDataError(f"{NAME} metadata 'grid' must be equal rows of 'X' and '0'")
    for name, words in (("across_words", across), ("down_words", down)):
        if not isinstance(words, list) or not all(
            isinstance(w, str) and w.isalpha() for w in words
        ):
            raise PuzzleDataError(f"{NAME} metadata {name!r} must be a list of words")
    if not across and not down:
        raise PuzzleDataError(f"{NAME} metadata has no words")
    return grid, across, down


def check(puzzle: Puzzle) -> None:
    _parts(puzzle)


def read_grid(block: str) -> list[list[str]]:
    """Rows of one-character cells ("" / "0" as a space); ``AnswerError`` if not a grid."""
    text = block.strip()
    try:
        value = parse_literal(text)
    except AnswerError:
        value = None
    if isinstance(value, list) and all(isinstance(row, list) for row in value):
        rows = [[str(v) for v in row] for row in value]
    elif text.startswith("[[") and text.endswith("]]"):
        # [[C, A, T], [ , , ]]: unquoted letters, as upstream's reader took them.
        rows = [
            [next(g for g in m.groups() if g is not None) for m in _TOKEN.finditer(row)]
            for row in _ROW.findall(text[1:-1])
        ]
    else:
        raise AnswerError("expected a list of rows")
    grid = [[" " if v in _BLANK else v for v in row] for row in rows]
    if not grid or any(len(v) != 1 or not (v == " " or v.isalpha()) for row in grid for v in row):
        raise AnswerError("cells must be single letters or blanks")
    return grid


def _runs(lines: list[str]) -> list[str]:
    return [run for line in lines for run in line.split(" ") if run]


def valid(
    layout: list[list[str]], across: list[str], down: list[str], grid: list[list[str]]
) -> bool:
    if len(grid) != len(layout) or any(len(a) != len(b) for a, b in zip(grid, layout, strict=True)):
        return False
    cells = zip((v for row in layout for v in row), (v for row in grid for v in row), strict=True)
    for want, got in cells:
        if (want == "X") != (got != " "):
            return False  # a letter cell left empty, or a letter in an empty cell
    rows = _runs(["".join(row).lower() for row in grid])
    cols = _runs(["".join(row[c] for row in grid).lower() for c in range(len(grid[0]))])
    return all(any(w.lower() in run for run in rows) for w in across) and all(
        any(w.lower() in run for run in cols) for w in down
    )


def verify(puzzle: Puzzle, text: str) -> float:
    layout, across, down = _parts(puzzle)
    grid = read_grid(list_answer_block(text))
    return 1.0 if valid(layout, across, down, grid) else 0.0
