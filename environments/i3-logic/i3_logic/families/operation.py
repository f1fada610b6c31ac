"""Operation (SynLogic): evaluate an expression over newly defined operator symbols.

Each symbol (``△``, ``⊕``, ...) is defined by a formula in ``x`` and ``y``, sometimes with a
condition (``when x is even, x △ y = x + y; otherwise ...``) and a precedence among the usual
operators; the question is the value of one expression. SynLogic stores the value as the row's
``answer`` (``str`` of an int or a float, e.g. ``"-7"`` or ``"3.3333333333333335"``) and
``metadata`` holds ``expression``, ``symbol_definitions``, ``result`` and ``simplified_expr``.
The prompt asks for the answer in ``\\boxed{}``.

The verifier reads one number from the final answer block (the last ``\\boxed{}`` unless the
reply has ``<answer>`` tags): an integer or decimal with an optional sign, or a fraction (``10/3``,
``\\frac{10}{3}``). It compares as upstream's math-verify does for these values: exactly when
the truth is an integer and the answer is written without a decimal point, otherwise both
rounded to 6 decimal places (``3.333333`` and ``10/3`` match ``3.3333333333333335``; ``3.33`` does
not). Unlike math-verify, an expression that still needs computing (``2 + 3``) is not an answer.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from i3_logic.answers import answer_block
from i3_logic.arith import number
from i3_logic.puzzle import Puzzle, PuzzleDataError

NAME = "operation"
ALIASES = ()
#: math-verify's default ``float_rounding``.
DECIMALS = 6
_THOUSANDS = re.compile(r"[-+\u2212]?\d{1,3}(?:,\d{3})+(?:\.\d+)?", re.ASCII)


def truth(puzzle: Puzzle) -> Fraction:
    """The stored value (``answer``, else ``metadata["result"]``); ``PuzzleDataError`` if it
    is not a finite real number."""
    raw: object = puzzle.answer.strip() or puzzle.metadata.get("result")
    if isinstance(raw, bool) or raw is None or raw == "":
        raise PuzzleDataError(f"{NAME} puzzle has no answer (the expression's value)")
    if isinstance(raw, float) and not math.isfinite(raw):
        raise PuzzleDataError(f"{NAME} answer must be a finite number, got {raw!r}")
    try:
        # Fraction reads "12", "-3.5" and "1e-05" exactly as written (no float rounding).
        return Fraction(str(raw).strip())
    except (ValueError, ZeroDivisionError):
        raise PuzzleDataError(f"{NAME} answer must be a real number, got {raw!r}") from None


def check(puzzle: Puzzle) -> None:
    truth(puzzle)


def verify(puzzle: Puzzle, text: str) -> float:
    expected = truth(puzzle)
    block = answer_block(text).rstrip("。").strip()
    if _THOUSANDS.fullmatch(block):
        block = block.replace(",", "")
    got = number(block)
    exact = expected.denominator == 1 and "." not in block
    if exact:
        return 1.0 if got == expected else 0.0
    return 1.0 if round(got, DECIMALS) == round(expected, DECIMALS) else 0.0
