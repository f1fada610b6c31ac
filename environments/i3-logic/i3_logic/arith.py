"""Exact arithmetic on model-written expressions, without ``eval``.

The expression is parsed with ``ast.parse`` and walked by a whitelist: non-negative integer
literals, ``+ - * /`` and parentheses. Values are ``Fraction`` (no float rounding); division by
zero, powers, names, calls, unary signs and anything else are rejected. Inputs are bounded in
length and literal size, so a hostile expression cannot hang or exhaust the grader.

Families that need more opt in per call: ``%`` (Python's floor modulo, SynLogic's math_path),
a leading sign and decimal literals (read exactly from their digits, never through ``float``).
``number`` reads one numeric answer (``-3``, ``2.5``, ``10/3``, ``\\frac{10}{3}``).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from fractions import Fraction

from i3_logic.puzzle import AnswerError

MAX_EXPRESSION_CHARS = 200
MAX_LITERAL = 10**6

BASIC_OPERATORS = frozenset("+-*/")
_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Mod: "%"}
_NORMALISE = str.maketrans(
    {
        "×": "*",
        "x": "*",
        "X": "*",
        "·": "*",
        "⋅": "*",
        "∗": "*",
        "÷": "/",
        "−": "-",
        "–": "-",
        "[": "(",
        "]": ")",
        "{": "(",
        "}": ")",
    }
)
_ALLOWED = re.compile(r"[0-9+\-*/() ]*")
_ALLOWED_EXTENDED = re.compile(r"[0-9+\-*/%.() ]*")
_DECIMAL = re.compile(r"\d+\.\d+|\d+", re.ASCII)
_FRAC = re.compile(r"\\[dt]?frac\s*\{")
# Juxtaposition is multiplication: 8(5 + 7 - 9), (1 + 2)(3 + 5), (4 + 4)3.
_IMPLICIT = re.compile(r"(?<=[0-9)])\s*(?=\()|(?<=\))\s*(?=[0-9])")


@dataclass(frozen=True, slots=True)
class Evaluated:
    value: Fraction
    numbers: tuple[int | Fraction, ...]  # literals in order of appearance (decimals: Fraction)
    operators: frozenset[str]


def normalise(text: str) -> str:
    """Plain ``+ - * / ( )`` text from the ways arithmetic is commonly written (LaTeX
    ``\\times``, ``\\div``, ``\\frac{a}{b}``, ``\\left(``, brackets as parentheses, ``×``, ``÷``,
    ``·``, Unicode minus, juxtaposition as multiplication)."""
    text = _fractions(text)
    text = text.replace("\\times", "*").replace("\\cdot", "*").replace("\\div", "/")
    text = text.replace("\\left", "").replace("\\right", "").replace("$", "")
    text = text.translate(_NORMALISE)
    return " ".join(_IMPLICIT.sub("*", text).split())


def _fractions(text: str) -> str:
    """``\\frac{a}{b}`` (also ``\\dfrac``, ``\\tfrac``, nested) as ``((a)/(b))``."""
    for _ in range(MAX_EXPRESSION_CHARS):
        m = _FRAC.search(text)
        if not m:
            return text
        num_end = _group_end(text, m.end())
        if num_end is None or text[num_end + 1 : num_end + 2] != "{":
            return text  # malformed: left for the character check to reject
        den_end = _group_end(text, num_end + 2)
        if den_end is None:
            return text
        num, den = text[m.end() : num_end], text[num_end + 2 : den_end]
        text = f"{text[: m.start()]}(({num})/({den})){text[den_end + 1 :]}"
    return text


def _group_end(text: str, start: int) -> int | None:
    """Index of the ``}`` closing the group whose content starts at ``start``."""
    depth = 1
    for i in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return i
    return None


def evaluate(
    expression: str,
    *,
    operators: frozenset[str] = BASIC_OPERATORS,
    signed: bool = False,
    decimals: bool = False,
) -> Evaluated:
    """Value, literals and operators of ``expression``; ``AnswerError`` if it is not allowed.

    ``operators`` may add ``%``; ``signed`` allows a unary ``-``/``+`` on a literal or a
    parenthesised group; ``decimals`` allows literals such as ``2.5`` (exact: ``5/2``).
    """
    text = normalise(expression)
    if not text:
        raise AnswerError("empty expression")
    if len(text) > MAX_EXPRESSION_CHARS:
        raise AnswerError(f"expression longer than {MAX_EXPRESSION_CHARS} characters")
    allowed = _ALLOWED_EXTENDED if ("%" in operators or decimals) else _ALLOWED
    if not allowed.fullmatch(text):
        bad = sorted({c for c in text if not allowed.fullmatch(c)})
        raise AnswerError(f"characters not allowed in an expression: {''.join(bad)!r}")
    if "**" in text or "//" in text:
        raise AnswerError("only + - * / are allowed")
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise AnswerError("not an arithmetic expression") from None
    walker = _Walker(text, frozenset(operators), signed, decimals)
    value = walker.walk(tree.body, 0)
    return Evaluated(value, tuple(walker.numbers), frozenset(walker.ops))


def number(text: str) -> Fraction:
    """One number as an answer is written: an integer or decimal with an optional sign, or a
    fraction of two of them (``10/3``, ``\\frac{10}{3}``, ``-\\dfrac{1}{2}``); exact.
    ``AnswerError`` for anything else (an expression with more operations is not one number)."""
    found = evaluate(text, operators=frozenset("/"), signed=True, decimals=True)
    if len(found.numbers) > 2:
        raise AnswerError("expected one number or one fraction")
    return found.value


class _Walker:
    """The whitelist walk: literals, the allowed binary operators and (opted in) signs."""

    def __init__(self, text: str, operators: frozenset[str], signed: bool, decimals: bool):
        self.text = text
        self.operators = operators
        self.signed = signed
        self.decimals = decimals
        self.numbers: list[int | Fraction] = []
        self.ops: set[str] = set()

    def walk(self, node: ast.AST, depth: int) -> Fraction:
        if depth > 50:
            raise AnswerError("expression nested too deeply")
        if isinstance(node, ast.Constant) and type(node.value) is int:
            if node.value > MAX_LITERAL:
                raise AnswerError("number too large")
            self.numbers.append(node.value)
            return Fraction(node.value)
        if isinstance(node, ast.Constant) and type(node.value) is float and self.decimals:
            # The digits as written ("0.1" is exactly 1/10), not the float ast made of them.
            written = ast.get_source_segment(self.text, node) or ""
            if not _DECIMAL.fullmatch(written) or len(written) > 20:
                raise AnswerError(f"not a plain decimal: {written!r}")
            value = Fraction(written)
            if value > MAX_LITERAL:
                raise AnswerError("number too large")
            self.numbers.append(value)
            return value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            if not self.signed or isinstance(node.operand, ast.UnaryOp):
                raise AnswerError("a sign is not an operation here")
            value = self.walk(node.operand, depth + 1)
            return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.BinOp) and _OPS.get(type(node.op)) in self.operators:
            left = self.walk(node.left, depth + 1)
            right = self.walk(node.right, depth + 1)
            self.ops.add(_OPS[type(node.op)])
            if isinstance(node.op, ast.Add):
                return left + right
            if isinstance(node.op, ast.Sub):
                return left - right
            if isinstance(node.op, ast.Mult):
                return left * right
            if right == 0:
                raise AnswerError("division by zero")
            # Python's semantics: ``%`` takes the sign of the divisor (floor modulo).
            return left % right if isinstance(node.op, ast.Mod) else left / right
        raise AnswerError(f"{type(node).__name__} is not allowed in an expression")
