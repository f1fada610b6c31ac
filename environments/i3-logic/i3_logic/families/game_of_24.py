"""Game of 24 (and its generalisation, SynLogic's ``mathador``): reach a target number.

Use every given number exactly once with the allowed operators (``+ - * /``) and parentheses.
Difficulty sets the size: level 1 is the classic four numbers (1-13) making 24; level 2 five
numbers and a target up to 200; level 3 six numbers (1-20) and a target up to 999. Every
generated puzzle carries a solution found by the generator (level 1: exhaustive search; levels
2-3: the target is the value of a random expression over the numbers).

Metadata is SynLogic's Game-of-24 layout (upstream's ``mathador`` rows): ``numbers`` (sorted
integers), ``result``, ``operators``, ``solutions``, ``candidates``, ``num_of_numbers``,
``trace_id``; the row's ``answer`` may be empty. The SynLogic prompt asks for one expression in
a final ```` ```python ```` block; that block is the answer unless the reply has ``<answer>``
tags (this package's own prompts ask for those), else the common forms of
:mod:`i3_logic.answers`.

Verification never evaluates the answer as code (see :mod:`i3_logic.arith`) and compares the
exact value with ``metadata["result"]``, so an expression with the right numbers but the wrong
value scores 0 (the upstream SynLogic checker compared the result with itself).
"""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

from i3_logic.answers import python_answer_block
from i3_logic.arith import evaluate
from i3_logic.puzzle import (
    ANSWER_INSTRUCTION,
    Puzzle,
    PuzzleDataError,
    require,
    trace_id,
)

NAME = "game_of_24"
ALIASES = ("mathador", "game24")
OPERATORS = ("+", "-", "*", "/")
# SynLogic's generator also knows "%" (its operator table); the walker can do it exactly.
KNOWN_OPERATORS = frozenset({*OPERATORS, "%"})
LEVELS = {1: (4, 13, None), 2: (5, 13, (10, 200)), 3: (6, 20, (50, 999))}


def solve(numbers: list[int], target: int) -> str | None:
    """One expression over ``numbers`` equal to ``target`` (exhaustive search), or None."""
    items = [(Fraction(n), str(n)) for n in numbers]
    return _search(items, Fraction(target))


def _search(items: list[tuple[Fraction, str]], target: Fraction) -> str | None:
    if len(items) == 1:
        return items[0][1] if items[0][0] == target else None
    for i in range(len(items)):
        for j in range(len(items)):
            if i == j:
                continue
            (a, ea), (b, eb) = items[i], items[j]
            rest = [items[k] for k in range(len(items)) if k not in (i, j)]
            candidates = [(a - b, f"({ea} - {eb})"), (a * b, f"({ea} * {eb})")]
            if i < j:
                candidates.insert(0, (a + b, f"({ea} + {eb})"))
            if b != 0:
                candidates.append((a / b, f"({ea} / {eb})"))
            for value, expr in candidates:
                found = _search([*rest, (value, expr)], target)
                if found is not None:
                    return found
    return None


def _strip_outer(expr: str) -> str:
    if expr.startswith("(") and expr.endswith(")"):
        depth = 0
        for i, c in enumerate(expr):
            depth += c == "("
            depth -= c == ")"
            if depth == 0 and i < len(expr) - 1:
                return expr
        return expr[1:-1]
    return expr


def _random_expression(rng: random.Random, numbers: list[int], lo: int, hi: int) -> tuple[str, int]:
    while True:
        items = [(Fraction(n), str(n)) for n in numbers]
        rng.shuffle(items)
        while len(items) > 1:
            (a, ea), (b, eb) = items.pop(), items.pop()
            op = rng.choice(OPERATORS)
            if op == "-" and a < b:
                (a, ea), (b, eb) = (b, eb), (a, ea)
            if op == "/" and (b == 0 or (a / b).denominator != 1):
                op = "+"
            value = {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b else a}[op]
            items.append((value, f"({ea} {op} {eb})"))
        value, expr = items[0]
        if value.denominator == 1 and lo <= value <= hi:
            return _strip_outer(expr), int(value)


def generate(rng: random.Random, difficulty: int) -> Puzzle:
    count, top, target_range = LEVELS[difficulty]
    while True:
        numbers = sorted(rng.randint(1, top) for _ in range(count))
        if target_range is None:
            target = 24
            solution = solve(numbers, target)
            if solution is None:
                continue
            solution = _strip_outer(solution)
        else:
            solution, target = _random_expression(rng, numbers, *target_range)
        break
    shown = ", ".join(map(str, numbers))
    question = (
        f"Use the numbers {shown} to make {target}.\n"
        "Each number must be used exactly once. You may use + - * / and parentheses; "
        "no other operations, and numbers may not be joined into longer numbers.\n"
        "The answer is a single arithmetic expression, for example <answer>(9 - 3) * 5 + 1"
        "</answer> for the numbers 1, 3, 5, 9 and the target 31.\n"
        f"{ANSWER_INSTRUCTION}"
    )
    metadata = {
        "trace_id": trace_id(rng),
        "numbers": numbers,
        "solutions": [solution],
        "candidates": list(range(1, top + 1)),
        "operators": list(OPERATORS),
        "result": target,
        "num_of_numbers": count,
    }
    return Puzzle(NAME, question, solution, difficulty, metadata)


def check(puzzle: Puzzle) -> None:
    numbers, result = require(puzzle.metadata, NAME, "numbers", "result")
    if not isinstance(numbers, list) or not numbers or any(type(n) is not int for n in numbers):
        raise PuzzleDataError(f"{NAME} metadata 'numbers' must be a non-empty list of integers")
    if any(n < 0 for n in numbers):
        raise PuzzleDataError(f"{NAME} metadata 'numbers' must not be negative")
    if isinstance(result, bool) or not isinstance(result, int | float) or result != result:
        raise PuzzleDataError(f"{NAME} metadata 'result' must be a number")
    _operators(puzzle)


def _operators(puzzle: Puzzle) -> frozenset[str]:
    ops = puzzle.metadata.get("operators", list(OPERATORS))
    if not isinstance(ops, list) or not ops or not set(ops) <= KNOWN_OPERATORS:
        raise PuzzleDataError(f"{NAME} metadata 'operators' must be a subset of + - * / %")
    return frozenset(ops)


def verify(puzzle: Puzzle, text: str) -> float:
    meta: dict[str, Any] = puzzle.metadata
    target = Fraction(meta["result"])
    allowed = _operators(puzzle)
    # "expr", "expr = 24", "24 = expr", "expr = 8 * 3 = 24": every side must equal the
    # target and one side must be the expression over exactly the given numbers.
    block = python_answer_block(text)
    sides = [evaluate(side, operators=allowed) for side in block.split("=") if side.strip()]
    if not sides or any(side.value != target for side in sides):
        return 0.0
    numbers = sorted(meta["numbers"])
    uses_numbers = (sorted(side.numbers) == numbers for side in sides)
    return 1.0 if any(uses_numbers) else 0.0
