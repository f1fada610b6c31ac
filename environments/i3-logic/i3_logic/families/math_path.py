"""Math path (SynLogic): restore the digits hidden as ``?`` in an equation.

``metadata["query_expr"]`` is the equation with its left-side digits (each operand is one digit,
0-9) replaced by ``?``, e.g. ``?+(?*4)-?%? = 12``; ``ref_expr`` (also the row's ``answer``) is the
generator's own filling, ``n`` the number of operations and ``x_prob`` the share of hidden
digits (percent). Operators are ``+ - * / %`` with Python's meaning (``/`` exact division,
``%`` floor modulo). The prompt asks for the completed equation between ``[[`` and ``]]`` at
the end of the reply.

The answer is the last ``[[...]]`` of the reply (unless it has ``<answer>`` tags; without either,
the common answer forms). It must be the query with each ``?`` replaced by one digit and
everything else unchanged (digits shown, operators, parentheses, the right side; spaces and
``×``/``÷``/``−`` spellings aside), and its left side must equal its right side exactly. Any such
filling scores 1. Upstream checked only the order of digits and operators, so it accepted moved
or dropped parentheses; here they must stay as given. A line with two ``[[...]]`` candidates is a
hedge (0). The equation is walked by :mod:`i3_logic.arith`, never evaluated as code.
"""

from __future__ import annotations

import re
from fractions import Fraction

from i3_logic.answers import clean, last_bracketed, unbracketed_answer_block
from i3_logic.arith import evaluate
from i3_logic.puzzle import MAX_ANSWER_CHARS, AnswerError, Puzzle, PuzzleDataError, require

NAME = "math_path"
ALIASES = ()
OPERATORS = frozenset("+-*/%")
_QUERY_LEFT = re.compile(r"[0-9?+\-*/%()]+", re.ASCII)
_INTEGER = re.compile(r"-?\d+", re.ASCII)
_DOUBLE_BRACKETS = re.compile(r"\[\[(.*?)\]\]", re.DOTALL)
_SPELLINGS = str.maketrans({"\u00d7": "*", "\u00f7": "/", "\u2212": "-", "\u2013": "-"})


def _query(puzzle: Puzzle) -> tuple[str, str]:
    """The query's left side (no spaces) and right side; ``PuzzleDataError`` if malformed."""
    (query,) = require(puzzle.metadata, NAME, "query_expr")
    if not isinstance(query, str) or query.count("=") != 1:
        raise PuzzleDataError(f"{NAME} metadata 'query_expr' must be an equation 'left = right'")
    left, right = ("".join(side.split()) for side in query.split("="))
    if not _QUERY_LEFT.fullmatch(left) or not _INTEGER.fullmatch(right):
        raise PuzzleDataError(
            f"{NAME} metadata 'query_expr' must be digits, '?', + - * / % and parentheses "
            f"equal to an integer; got {query!r}"
        )
    if "?" not in left:
        raise PuzzleDataError(f"{NAME} metadata 'query_expr' hides no digit")
    return left, right


def check(puzzle: Puzzle) -> None:
    _query(puzzle)


def _block(text: str) -> str:
    """The last ``[[...]]`` (the asked form) unless the reply has ``<answer>`` tags; else the
    common forms. Two ``[[...]]`` on the line of the last one are a hedge."""
    found = last_bracketed(text, _DOUBLE_BRACKETS)
    if found is None:
        return unbracketed_answer_block(text, _DOUBLE_BRACKETS)
    block = found.strip()
    if len(block) > MAX_ANSWER_CHARS:
        raise AnswerError(f"answer longer than {MAX_ANSWER_CHARS} characters")
    return clean(block)


def fills(left: str, written: str) -> bool:
    """``written`` is ``left`` with each ``?`` replaced by exactly one digit."""
    return len(written) == len(left) and all(
        w.isdigit() if q == "?" else w == q for q, w in zip(left, written, strict=True)
    )


def verify(puzzle: Puzzle, text: str) -> float:
    left, right = _query(puzzle)
    block = _block(text)
    written = "".join(block.translate(_SPELLINGS).split()).replace("==", "=")
    if not written.isascii() or written.count("=") != 1:
        return 0.0
    w_left, w_right = written.split("=")
    if w_right != right or not fills(left, w_left):
        return 0.0
    try:
        value = evaluate(w_left, operators=OPERATORS).value
    except AnswerError:  # e.g. a division or modulo by zero
        return 0.0
    return 1.0 if value == Fraction(int(right)) else 0.0
