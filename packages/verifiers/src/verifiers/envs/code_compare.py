"""How a program's answer is compared with the expected one, in one place for every code grader.

The rules close the tolerance holes a policy can learn to use:
* an integer answer is compared exactly: `10**18 + 1` is not `10**18`, and a float (`3.0`,
  `1e18`) is not an integer answer unless the problem says floats are accepted
  (`Comparison.int_accepts_float`, then within the float tolerance);
* a float answer is compared within a stated tolerance (`float_rel_tol` / `float_abs_tol`,
  environment arguments); an integer is a fine float answer;
* strings are compared as the environment promises: `"exact"` (character for character) or
  `"tokens"` (whitespace-separated tokens, each compared by the two rules above);
* `True` is not `1`; tuples equal lists; only plain JSON values can be equal at all (the
  harness turns anything else into its `repr`, compared as a string).

A token counts as a number only when it is a plain decimal literal (`-12`, `3.5`, `1e-9`):
`nan`, `inf`, `1_000` and `0x10` are text, compared as text."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

__all__ = [
    "INT_LITERAL",
    "NUMBER_LITERAL",
    "Comparison",
    "numbers_equal",
    "outputs_match",
    "parse_number",
    "tokens_equal",
    "values_equal",
]

INT_LITERAL = re.compile(r"[+-]?\d+")
NUMBER_LITERAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
MAX_EXPONENT = 10_000  # a longer exponent is not an answer anyone expects; compared as text


@dataclass(frozen=True)
class Comparison:
    """The comparison policy of one environment (or one problem)."""

    float_rel_tol: float = 1e-6
    float_abs_tol: float = 1e-6
    int_accepts_float: bool = False  # a float may answer an integer (within the tolerance)
    strings: Literal["exact", "tokens"] = "exact"

    def __post_init__(self) -> None:
        from verifiers.errors import ConfigError

        tols = (self.float_rel_tol, self.float_abs_tol)
        if not all(isinstance(t, (int, float)) and not isinstance(t, bool) for t in tols):
            raise ConfigError(f"float tolerances must be numbers, got {tols!r}")
        if not all(t >= 0 for t in tols):  # also refuses NaN
            raise ConfigError("float tolerances must be non-negative numbers")
        if not isinstance(self.int_accepts_float, bool):
            raise ConfigError(
                f"int_accepts_float must be true or false, got {self.int_accepts_float!r}"
            )
        if self.strings not in ("exact", "tokens"):
            raise ConfigError(f"strings must be 'exact' or 'tokens', got {self.strings!r}")


DEFAULT = Comparison()


def _floats_close(actual: float | int, expected: float | int, cmp: Comparison) -> bool:
    try:
        a, e = float(actual), float(expected)
    except OverflowError:  # an integer past float range: only itself equals it
        return actual == expected
    if math.isinf(a) or math.isinf(e) or math.isnan(a) or math.isnan(e):
        return False  # json gives inf/nan only for Infinity/NaN: never a graded answer
    return math.isclose(a, e, rel_tol=cmp.float_rel_tol, abs_tol=cmp.float_abs_tol)


def numbers_equal(actual: Any, expected: Any, cmp: Comparison = DEFAULT) -> bool:
    """`actual` answers the number `expected` (ints and floats, never bools)."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(actual) is type(expected) and actual == expected
    if isinstance(expected, int):
        if isinstance(actual, int):
            return actual == expected
        return (
            cmp.int_accepts_float
            and isinstance(actual, float)
            and _floats_close(actual, expected, cmp)
        )
    if isinstance(expected, float) and isinstance(actual, (int, float)):
        return _floats_close(actual, expected, cmp)
    return False


def parse_number(token: str) -> Decimal | None:
    """An output token as an exact number: only plain decimal literals (`nan`, `inf`,
    `1_000`, `0x1f` are text) with an exponent of at most MAX_EXPONENT; else None."""
    if not NUMBER_LITERAL.fullmatch(token):
        return None
    try:
        value = Decimal(token)
    except InvalidOperation:
        return None
    return value if abs(value.adjusted()) <= MAX_EXPONENT else None


def tokens_equal(actual: str, expected: str, cmp: Comparison = DEFAULT) -> bool:
    """One output token against the expected one: text, or numbers by the rules above."""
    if actual == expected:
        return True
    e = parse_number(expected)
    a = parse_number(actual)
    if e is None or a is None:
        return False
    if INT_LITERAL.fullmatch(expected):
        if INT_LITERAL.fullmatch(actual):
            return a == e  # exact, any size ("007" is 7)
        if not cmp.int_accepts_float:
            return False
    if a == e:
        return True
    return _floats_close(float(a), float(e), cmp)


def outputs_match(actual: str, expected: str, cmp: Comparison = DEFAULT) -> bool:
    """Program output against the expected output, whitespace-insensitive: the same tokens in
    the same order (line breaks count as whitespace), each compared by `tokens_equal`."""
    a, e = actual.split(), expected.split()
    return len(a) == len(e) and all(tokens_equal(x, y, cmp) for x, y in zip(a, e, strict=True))


def values_equal(actual: Any, expected: Any, cmp: Comparison = DEFAULT) -> bool:
    """A function's JSON-decoded return value against the expected value, deeply."""
    if isinstance(actual, tuple):
        actual = list(actual)
    if isinstance(expected, tuple):
        expected = list(expected)
    if isinstance(expected, (bool, int, float)) or isinstance(actual, (bool, int, float)):
        return numbers_equal(actual, expected, cmp)
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(values_equal(x, y, cmp) for x, y in zip(actual, expected, strict=True))
        )
    if isinstance(expected, dict):
        return (
            isinstance(actual, dict)
            and actual.keys() == expected.keys()
            and all(values_equal(actual[k], expected[k], cmp) for k in expected)
        )
    if isinstance(expected, str):
        if not isinstance(actual, str):
            return False
        return (
            actual == expected if cmp.strings == "exact" else outputs_match(actual, expected, cmp)
        )
    if expected is None:
        return actual is None
    return False
