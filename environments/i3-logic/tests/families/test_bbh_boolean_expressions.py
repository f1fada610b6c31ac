"""BBH boolean expressions: rows recomputed, answers read, upstream's case bug fixed."""

from __future__ import annotations

import ast

from i3_logic.families import bbh_boolean_expressions as family
from i3_logic_testkit import broken_answers_test, real_puzzles, replies_test

PUZZLES = real_puzzles(family.NAME)


def value(node: ast.AST) -> bool:
    """A Boolean expression of True/False/not/and/or, by Python's own grammar (no eval)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return not value(node.operand)
    if isinstance(node, ast.BoolOp):
        values = [value(v) for v in node.values]
        return all(values) if isinstance(node.op, ast.And) else any(values)
    raise AssertionError(ast.dump(node))


def test_rows_are_right():
    for p in PUZZLES:
        expression = p.question.split("\n")[1].removesuffix(" is")
        assert p.answer == str(value(ast.parse(expression, mode="eval").body))


P = PUZZLES[0]  # not ( True ) and ( True ) -> False


test_answer_forms = replies_test(
    P,
    [
        ("So the answer is False.", 1.0),
        ("so the answer is false", 1.0),  # upstream compared case-sensitively: 0
        ("<answer>FALSE</answer>", 1.0),
        ("\\boxed{\\text{False}}", 1.0),
        ("So the answer is True.", 0.0),
        ("So the answer is not True.", 0.0),
        ("So the answer is True or False.", 0.0),
        ("False, as computed.", 0.0),  # no statement: upstream took the first true/false word
        ("", 0.0),
        ("So the answer is " + "False " * 1000, 0.0),
    ],
)


test_check_rejects_rows_without_a_truth_value = broken_answers_test(
    family.check, family.NAME, ["", "yes", "1"], question=P.question
)
