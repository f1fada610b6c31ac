"""Calcudoko (KenKen): a Latin square whose regions must hit a target with an operator.

SynLogic's layout (``games/tasks/calcudoko``): ``metadata.grid_size`` n and
``metadata.regions``, each ``{"cells": ["(1,1)", "(2,1)"], "target": 3, "operator": "+"}``
(cells ``"(row,col)"`` from 1; operators ``+``, ``-``, ``*``, ``÷``); ``answer`` is the solution
in the form the prompt asks for, ``[[A B C,D E F,G H I]]`` (rows separated by commas).

The verifier checks the rules: every row and column holds 1..n once, the numbers in a region
are distinct (the prompt says so), and each region's numbers give the target: their sum (+) or
product (*), or, for a region of two cells, their difference (-) or quotient (÷) in either
order. Division is exact. Differences from upstream: the grid is read from the reply's final
answer (upstream took the first ``[[...]]`` anywhere in the reply and padded a short or
missing row with 1s); a malformed answer scores 0.
"""

from __future__ import annotations

import math
import re
from typing import Any

from i3_logic.families.futoshiki import latin_answer
from i3_logic.puzzle import Puzzle, PuzzleDataError, require

NAME = "calcudoko"
ALIASES = ()
MAX_SIZE = 12
OPERATORS = {"+": "+", "-": "-", "*": "*", "×": "*", "x": "*", "÷": "/", "/": "/"}

_CELL = re.compile(r"\(\s*(\d+)\s*,\s*(\d+)\s*\)")

Region = tuple[list[tuple[int, int]], int, str]


def _cell(value: Any, n: int) -> tuple[int, int]:
    """A region cell, ``"(r,c)"`` (or ``[r, c]``) from 1, as a 0-based pair."""
    m = _CELL.fullmatch(value.strip()) if isinstance(value, str) else None
    if m:
        r, c = int(m.group(1)), int(m.group(2))
    elif isinstance(value, list) and len(value) == 2 and all(type(v) is int for v in value):
        r, c = value
    else:
        raise PuzzleDataError(f"{NAME} region cell {value!r} is not '(row,col)'")
    if not (1 <= r <= n and 1 <= c <= n):
        raise PuzzleDataError(f"{NAME} region cell {value!r} is outside the {n}x{n} grid")
    return r - 1, c - 1


def _parts(puzzle: Puzzle) -> tuple[int, list[Region]]:
    n, regions = require(puzzle.metadata, NAME, "grid_size", "regions")
    if type(n) is not int or not 2 <= n <= MAX_SIZE:
        raise PuzzleDataError(f"{NAME} metadata 'grid_size' must be an integer 2-{MAX_SIZE}")
    if not isinstance(regions, list) or not regions:
        raise PuzzleDataError(f"{NAME} metadata 'regions' must be a non-empty list")
    parsed: list[Region] = []
    for region in regions:
        if not isinstance(region, dict) or not {"cells", "target", "operator"} <= set(region):
            raise PuzzleDataError(f"{NAME} region {region!r} lacks cells, target or operator")
        cells, target, op = region["cells"], region["target"], region["operator"]
        if not isinstance(cells, list) or not cells:
            raise PuzzleDataError(f"{NAME} region {region!r}: cells must be a non-empty list")
        if type(target) is float and target.is_integer():
            target = int(target)
        if type(target) is not int or op not in OPERATORS:
            raise PuzzleDataError(
                f"{NAME} region {region!r}: target must be an integer and the operator one of "
                f"{', '.join(OPERATORS)}"
            )
        parsed.append(([_cell(c, n) for c in cells], target, OPERATORS[op]))
    return n, parsed


def check(puzzle: Puzzle) -> None:
    _parts(puzzle)


def region_holds(values: list[int], target: int, op: str) -> bool:
    if len(set(values)) != len(values):
        return False  # no number repeats in a region
    if op == "+":
        return sum(values) == target
    if op == "*":
        return math.prod(values) == target
    if len(values) != 2:
        return False  # - and ÷ are defined on two cells
    small, big = sorted(values)
    if op == "-":
        return big - small == target
    return big == small * target  # exact division, either order


def verify(puzzle: Puzzle, text: str) -> float:
    n, regions = _parts(puzzle)
    grid = latin_answer(text, n)
    if grid is None:
        return 0.0
    for cells, target, op in regions:
        if not region_holds([grid[r][c] for r, c in cells], target, op):
            return 0.0
    return 1.0
