"""math_path: every filling of each row's query judged by brute force; the template rule
(parentheses kept), hedges, hostile input and broken rows."""

from __future__ import annotations

import ast
import itertools
import operator
from fractions import Fraction

import pytest
from i3_logic import Puzzle, verify
from i3_logic.families import math_path
from i3_logic_testkit import ARITHMETIC, broken_metadata_test, replies_test, row_params

from verifiers.testing import assert_replies_scored

_AST = {**ARITHMETIC, ast.Mod: operator.mod}


def value(expr: str) -> Fraction | None:
    """Python's parser and exact fractions (Python's own % on them); None on a zero divisor."""

    def walk(node: ast.AST) -> Fraction:
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return Fraction(node.value)
        if isinstance(node, ast.BinOp):
            return _AST[type(node.op)](walk(node.left), walk(node.right))
        raise ValueError(ast.dump(node))

    try:
        return walk(ast.parse(expr, mode="eval").body)
    except ZeroDivisionError:
        return None


def fillings(query: str) -> dict[str, bool]:
    """Every way to fill the ``?`` of ``query``'s left side, and whether it makes it true."""
    left, right = (s.strip() for s in query.split("="))
    holes = left.count("?")
    out = {}
    for digits in itertools.product("0123456789", repeat=holes):
        it = iter(digits)
        filled = "".join(next(it) if ch == "?" else ch for ch in left)
        out[filled] = value(filled) == int(right)
    return out


@pytest.mark.parametrize("row,pz", row_params("math_path"))
def test_rows_solvable_and_every_filling_judged(row, pz):
    query, ref = pz.metadata["query_expr"], pz.metadata["ref_expr"]
    right = query.split("=")[1].strip()
    table = fillings(query)
    ref_left = "".join(ref.split("=")[0].split())
    assert table[ref_left], "the reference filling must be right"
    assert pz.answer == ref
    for filled, ok in table.items():
        assert verify(pz, f"Restored:\n[[{filled} = {right}]]") == float(ok), filled
    assert_replies_scored(lambda reply: verify(pz, reply), row["_right"], row["_wrong"])


P = Puzzle(
    "math_path", "q", "", 1, {"query_expr": "(?-3)*?+? = 30", "ref_expr": "(9 - 3)*4 + 6 = 30"}
)


test_answer_forms = replies_test(
    P,
    [
        ("[[(9 - 3)*4 + 6 = 30]]", 1.0),
        ("[[(9 − 3)×4 + 6 = 30]]", 1.0),
        ("[[(9-3)*4+6==30]]", 1.0),
        ("<answer>(9 - 3)*4 + 6 = 30</answer>", 1.0),
        ("<answer>[[(9 - 3)*4 + 6 = 30]]</answer>", 1.0),
        ("\\boxed{(9 - 3)*4 + 6 = 30}", 1.0),
        ("[[9 - 3*4 + 6 = 30]]", 0.0),  # parentheses dropped (upstream accepted the digit order)
        ("[[9 - (3*4) + 6 = 30]]", 0.0),  # parentheses moved
        ("[[(9 - 3)*4 + 6]]", 0.0),  # no right side
        ("[[(9 - 3)*4 + 6 = 30 = 30]]", 0.0),
        ("[[(9 - 3)*4 + 6 = 31]]", 0.0),  # the right side is given
        ("[[(9 - 3)*14 + 6 = 30]]", 0.0),  # two digits for one ?
        ("[[(٩ - 3)*4 + 6 = 30]]", 0.0),  # a non-ASCII digit
        ("[[(3 - 3)*4 + 6 = 30]]", 0.0),
        ("[[(3 - 3)*4 + 6 = 30]] or [[(9 - 3)*4 + 6 = 30]]", 0.0),  # hedge on one line
        ("First guess [[(3 - 3)*4 + 6 = 30]].\nFinal:\n[[(9 - 3)*4 + 6 = 30]]", 1.0),
        ("(9 - 3)*4 + 6 = 30", 0.0),  # no answer block
        ("[[]]", 0.0),
        ("[[" + "(" * 3000 + "]]", 0.0),
        ("[[__import__('os') = 30]]", 0.0),
    ],
)


def test_division_and_modulo_by_zero_score_zero():
    p = Puzzle("math_path", "q", "", 1, {"query_expr": "?/?+?%? = 1"})
    assert verify(p, "[[1/1+0%1 = 1]]") == 1.0
    assert verify(p, "[[1/0+1%1 = 1]]") == 0.0
    assert verify(p, "[[1/1+1%0 = 1]]") == 0.0


def test_modulo_is_pythons():
    p = Puzzle("math_path", "q", "", 1, {"query_expr": "?-7%? = -1"})
    # 1 - 7 % 3 = 1 - 1 = 0; 0 - 7 % 8 = -7; 6 - 7 % 1 = 6; 1 - 7 % 5 = -1
    assert verify(p, "[[1-7%5 = -1]]") == 1.0
    assert verify(p, "[[1-7%3 = -1]]") == 0.0


test_check_rejects_broken_rows = broken_metadata_test(
    math_path.check,
    "math_path",
    [
        {},
        {"query_expr": 12},
        {"query_expr": "?+? = ?"},
        {"query_expr": "?+? 3"},
        {"query_expr": "1+2 = 3"},  # nothing hidden
        {"query_expr": "?+x = 3"},
        {"query_expr": "?+? = 3 = 3"},
    ],
)
