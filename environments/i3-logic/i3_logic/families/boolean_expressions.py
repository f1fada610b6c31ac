"""Boolean expressions: evaluate ``True``/``False`` with ``not``, ``and``, ``or`` and parentheses.

Level 1 nests to depth 2, level 2 to depth 3, level 3 to depth 4 (with more operands). The
ground truth is computed by this module's own recursive-descent evaluator from the expression
stored in the metadata (Python precedence: ``not`` > ``and`` > ``or``); the answer must be
exactly one of ``True`` or ``False`` (case-insensitive; wrappers such as ``\boxed{}``, bold,
quotes, a trailing period or an "Answer:" label are read through, see ``i3_logic.answers``).
"""

from __future__ import annotations

import random
import re

from i3_logic.answers import answer_block, choice
from i3_logic.puzzle import (
    ANSWER_INSTRUCTION,
    AnswerError,
    Puzzle,
    PuzzleDataError,
    require,
)

NAME = "boolean_expressions"
ALIASES = ()
LEVELS = {1: 2, 2: 3, 3: 4}
_TOKEN = re.compile(r"\s*(True|False|not|and|or|\(|\))")


def tokenize(expression: str) -> list[str]:
    tokens, pos = [], 0
    expression = expression.rstrip()
    while pos < len(expression):
        m = _TOKEN.match(expression, pos)
        if not m:
            raise ValueError(f"unexpected text at {pos}: {expression[pos : pos + 10]!r}")
        tokens.append(m.group(1))
        pos = m.end()
    return tokens


def evaluate(expression: str) -> bool:
    """Value of a boolean expression (``ValueError`` if malformed)."""
    tokens = tokenize(expression)
    pos = 0

    def peek() -> str | None:
        return tokens[pos] if pos < len(tokens) else None

    def take(expected: str | None = None) -> str:
        nonlocal pos
        tok = peek()
        if tok is None or (expected is not None and tok != expected):
            raise ValueError(f"expected {expected or 'a token'} at token {pos}")
        pos += 1
        return tok

    def disjunction() -> bool:
        value = conjunction()
        while peek() == "or":
            take()
            value = conjunction() or value
        return value

    def conjunction() -> bool:
        value = negation()
        while peek() == "and":
            take()
            value = negation() and value
        return value

    def negation() -> bool:
        if peek() == "not":
            take()
            return not negation()
        tok = take()
        if tok == "(":
            value = disjunction()
            take(")")
            return value
        if tok in ("True", "False"):
            return tok == "True"
        raise ValueError(f"unexpected {tok!r}")

    value = disjunction()
    if pos != len(tokens):
        raise ValueError("trailing tokens")
    return value


def _expr(rng: random.Random, depth: int) -> str:
    if depth == 0 or rng.random() < 0.2:
        atom = rng.choice(("True", "False"))
        return f"not {atom}" if rng.random() < 0.3 else atom
    op = rng.choice(("and", "or"))
    parts = [_expr(rng, depth - 1) for _ in range(rng.choice((2, 2, 3)))]
    inner = f" {op} ".join(parts)
    if rng.random() < 0.25:
        return f"not ( {inner} )"
    return f"( {inner} )"


def generate(rng: random.Random, difficulty: int) -> Puzzle:
    depth = LEVELS[difficulty]
    while True:
        expression = _expr(rng, depth)
        if expression.startswith("( ") and expression.endswith(" )"):
            expression = expression[2:-2]
        if len(tokenize(expression)) >= 3 + 2 * difficulty:
            break
    value = evaluate(expression)
    question = (
        "Evaluate the following Boolean expression. `not` binds tighter than `and`, which binds "
        "tighter than `or`. The answer is True or False.\n\n"
        f"{expression}\n\n{ANSWER_INSTRUCTION}"
    )
    return Puzzle(
        NAME, question, str(value), difficulty, {"expression": expression, "value": value}
    )


def check(puzzle: Puzzle) -> None:
    (expression,) = require(puzzle.metadata, NAME, "expression")
    try:
        value = evaluate(str(expression))
    except ValueError as e:
        raise PuzzleDataError(f"{NAME} metadata 'expression' is malformed: {e}") from None
    stored = puzzle.metadata.get("value", value)
    if stored is not value:
        raise PuzzleDataError(f"{NAME} metadata 'value' {stored!r} disagrees with the expression")


def verify(puzzle: Puzzle, text: str) -> float:
    truth = evaluate(puzzle.metadata["expression"])
    try:
        answer = choice(answer_block(text), ("true", "false"))
    except AnswerError:
        return 0.0
    if answer is None:
        return 0.0
    return 1.0 if (answer == "true") == truth else 0.0
