"""Exact arithmetic on model-written expressions, without ``eval``.

The expression is parsed with ``ast.parse`` and walked by a whitelist: non-negative integer
literals, ``+ - * /`` and parentheses. Values are ``Fraction`` (no float rounding); division by
zero, powers, names, calls, unary signs and anything else are rejected. Inputs are bounded in
length and literal size, so a hostile expression cannot hang or exhaust the grader.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from fractions import Fraction

from i3_logic.puzzle import AnswerError

MAX_EXPRESSION_CHARS = 200
MAX_LITERAL = 10**6

_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}
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
_FRAC = re.compile(r"\\[dt]?frac\s*\{")
# Juxtaposition is multiplication: 8(5 + 7 - 9), (1 + 2)(3 + 5), (4 + 4)3.
_IMPLICIT = re.compile(r"(?<=[0-9)])\s*(?=\()|(?<=\))\s*(?=[0-9])")


@dataclass(frozen=True, slots=True)
class Evaluated:
    value: Fraction
    numbers: tuple[int, ...]  # literals in order of appearance
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


def evaluate(expression: str) -> Evaluated:
    """Value, literals and operators of ``expression``; ``AnswerError`` if it is not allowed."""
    text = normalise(expression)
    if not text:
        raise AnswerError("empty expression")
    if len(text) > MAX_EXPRESSION_CHARS:
        raise AnswerError(f"expression longer than {MAX_EXPRESSION_CHARS} characters")
    if not _ALLOWED.fullmatch(text):
        bad = sorted({c for c in text if not _ALLOWED.fullmatch(c)})
        raise AnswerError(f"characters not allowed in an expression: {''.join(bad)!r}")
    if "**" in text or "//" in text:
        raise AnswerError("only + - * / are allowed")
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise AnswerError("not an arithmetic expression") from None
    numbers: list[int] = []
    ops: set[str] = set()
    value = _walk(tree.body, numbers, ops, 0)
    return Evaluated(value, tuple(numbers), frozenset(ops))


def _walk(node: ast.AST, numbers: list[int], ops: set[str], depth: int) -> Fraction:
    if depth > 50:
        raise AnswerError("expression nested too deeply")
    if isinstance(node, ast.Constant) and type(node.value) is int:
        if node.value > MAX_LITERAL:
            raise AnswerError("number too large")
        numbers.append(node.value)
        return Fraction(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left = _walk(node.left, numbers, ops, depth + 1)
        right = _walk(node.right, numbers, ops, depth + 1)
        ops.add(_OPS[type(node.op)])
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, ast.Mult):
            return left * right
        if right == 0:
            raise AnswerError("division by zero")
        return left / right
    raise AnswerError(f"{type(node).__name__} is not allowed in an expression")
