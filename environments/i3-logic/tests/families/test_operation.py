"""operation: rows re-evaluated by an independent interpreter of the symbol definitions; number
forms, the 6-decimal comparison, hedges and broken rows."""

from __future__ import annotations

import ast
import operator
import re
from fractions import Fraction

import pytest
from i3_logic import Puzzle, verify
from i3_logic.families import operation
from i3_logic_testkit import broken_answers_test, row_params, verdicts_test

from verifiers.testing import assert_replies_scored

# SynLogic's conditions (metadata keeps the Chinese keys).
CONDITIONS = {
    "x和y都是偶数": lambda x, y: x % 2 == 0 and y % 2 == 0,
    "x和y都是奇数": lambda x, y: x % 2 != 0 and y % 2 != 0,
    "x是偶数": lambda x, y: x % 2 == 0,
    "x是奇数": lambda x, y: x % 2 != 0,
    "y是偶数": lambda x, y: y % 2 == 0,
    "y是奇数": lambda x, y: y % 2 != 0,
    "x大于y": lambda x, y: x > y,
    "x小于y": lambda x, y: x < y,
    "x等于y": lambda x, y: x == y,
}
BASIC = {
    "+": (1, operator.add),
    "-": (1, operator.sub),
    "*": (2, operator.mul),
    "/": (2, operator.truediv),
}
_AST = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


def formula(text: str, x: Fraction, y: Fraction) -> Fraction:
    def walk(node: ast.AST) -> Fraction:
        if isinstance(node, ast.Name):
            return {"x": x, "y": y}[node.id]
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return Fraction(node.value)
        if isinstance(node, ast.BinOp):
            return _AST[type(node.op)](walk(node.left), walk(node.right))
        raise ValueError(ast.dump(node))

    return walk(ast.parse(text, mode="eval").body)


def interpret(expression: str, symbols: dict) -> Fraction:
    """Shunting-yard over the expression's tokens, every operator left-associative (as
    SynLogic's generator reads them); a custom symbol applies its conditional formula when both
    operands are integers, else its default."""
    tokens = re.findall(r"\d+|[-+*/()]|[^\s\d()+*/-]", expression)
    prec = {op: p for op, (p, _) in BASIC.items()} | {
        s: d["precedence"] for s, d in symbols.items()
    }
    values: list[Fraction] = []
    ops: list[str] = []

    def apply() -> None:
        op = ops.pop()
        y, x = values.pop(), values.pop()
        if op in BASIC:
            values.append(BASIC[op][1](x, y))
            return
        d = symbols[op]
        rule = d["default_operation"]
        if d["conditions"] and x.denominator == 1 and y.denominator == 1:
            cond = d["conditions"][0]
            if CONDITIONS[cond["condition"]](int(x), int(y)):
                rule = cond["operation"]
        values.append(formula(rule, x, y))

    for tok in tokens:
        if tok.isdigit():
            values.append(Fraction(int(tok)))
        elif tok == "(":
            ops.append(tok)
        elif tok == ")":
            while ops[-1] != "(":
                apply()
            ops.pop()
        else:
            while ops and ops[-1] != "(" and prec[ops[-1]] >= prec[tok]:
                apply()
            ops.append(tok)
    while ops:
        apply()
    (value,) = values
    return value


@pytest.mark.parametrize("row,pz", row_params("operation"))
def test_rows_hold_the_value_of_their_expression(row, pz):
    meta = pz.metadata
    value = interpret(meta["expression"], meta["symbol_definitions"])
    assert abs(Fraction(pz.answer) - value) < Fraction(1, 10**12)
    assert str(meta["result"]) == pz.answer
    assert meta["expression"] in row["question"]
    assert_replies_scored(lambda reply: verify(pz, reply), row["_right"], row["_wrong"])


def pz(answer: str) -> Puzzle:
    return Puzzle("operation", "q", answer, 1, {"expression": "1 △ 2", "symbol_definitions": {}})


test_number_forms_and_comparison = verdicts_test(
    [
        (pz(answer), reply, score)
        for answer, reply, score in [
            ("-7", "\\boxed{-7}", 1.0),
            ("-7", "\\boxed{−7}", 1.0),
            ("-7", "\\boxed{-7.0}", 1.0),
            ("-7", "\\boxed{\\frac{-14}{2}}", 1.0),
            ("-7", "\\boxed{7}", 0.0),
            ("-7", "\\boxed{-7.1}", 0.0),
            ("12345", "\\boxed{12,345}", 1.0),
            ("12345", "\\boxed{12,34}", 0.0),
            ("0.5", "\\boxed{1/2}", 1.0),
            ("0.5", "\\boxed{\\dfrac{1}{2}}", 1.0),
            ("0.5", "\\boxed{.5}", 0.0),
            ("3.3333333333333335", "\\boxed{3.333333}", 1.0),
            ("3.3333333333333335", "\\boxed{3.3333333}", 1.0),
            ("3.3333333333333335", "\\boxed{3.3333}", 0.0),  # math-verify rounds to 6 places too
            ("3.3333333333333335", "\\boxed{3}", 0.0),
            ("1e-05", "\\boxed{0.00001}", 1.0),
            ("1e-05", "\\boxed{0}", 0.0),  # rounds to 0.00001 vs 0.00000
            ("4", "\\boxed{2 + 2}", 0.0),  # still an expression
            ("4", "\\boxed{4} or \\boxed{5}", 0.0),  # the last box is the answer
            ("4", "\\boxed{4 \\text{ or } 5}", 0.0),
            ("4", "\\boxed{}", 0.0),
            ("4", "4", 0.0),  # no answer block
            ("4", "\\boxed{" + "4" * 5000 + "}", 0.0),
            ("4", "\\boxed{9**9**9}", 0.0),
            ("4", "<answer>4</answer>", 1.0),
            ("4", "The answer is 4.", 1.0),
        ]
    ]
)


def test_metadata_result_is_the_fallback_truth():
    p = Puzzle("operation", "q", "", 1, {"result": 6})
    assert verify(p, "\\boxed{6}") == 1.0


test_check_rejects_rows_without_a_real_value = broken_answers_test(
    operation.check, "operation", ["", "abc", "nan", "inf", "(1+2j)", "1/0"]
)
