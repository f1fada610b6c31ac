"""BBH multi-step arithmetic and object counting: integers recomputed, one number stated."""

from __future__ import annotations

import ast
import operator

from i3_logic import TASKS, verify
from i3_logic.families import bbh_multistep_arithmetic_two as family
from i3_logic_testkit import broken_answers_test, real_puzzles, replies_test

PUZZLES = {p.task: p for p in real_puzzles(family.NAME)}
OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul}


def value(node: ast.AST) -> int:
    """Integer arithmetic by Python's grammar, walked (no eval)."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -value(node.operand)
    if isinstance(node, ast.BinOp) and type(node.op) in OPS:
        return OPS[type(node.op)](value(node.left), value(node.right))
    raise AssertionError(ast.dump(node))


def test_rows_are_right():
    assert set(PUZZLES) == {"bbh_multistep_arithmetic_two", "bbh_object_counting"}
    assert TASKS["bbh_object_counting"].name == family.NAME
    p = PUZZLES["bbh_multistep_arithmetic_two"]
    expression = p.question.split(" =")[0]
    assert int(p.answer) == value(ast.parse(expression, mode="eval").body)
    p = PUZZLES["bbh_object_counting"]
    instruments = {"piano": 1, "violins": 2, "trumpet": 1, "flute": 1}
    assert all(k in p.question for k in instruments) and int(p.answer) == sum(instruments.values())


P = PUZZLES["bbh_multistep_arithmetic_two"]  # -11


test_answer_forms = replies_test(
    P,
    [
        ("So the answer is -11.", 1.0),
        ("So the answer is \u221211.", 1.0),
        ("\\boxed{-11}", 1.0),
        ("First 7 * 2 = 14 ... so the answer is -11", 1.0),
        ("So the answer is 11.", 0.0),
        ("So the answer is -11 or 11.", 0.0),
        ("So the answer is -11.0.", 0.0),
        ("7 * 2 = 14, and the total is -11.", 0.0),  # no statement: upstream took 7
        ("So the answer is " + "1" * 40 + ".", 0.0),
        ("", 0.0),
    ],
)


def test_upstream_first_number_is_not_the_answer():
    # Upstream's fallback read the first number anywhere: "-11" here, although the reply
    # ends by stating 11.
    assert verify(P, "-11 was wrong; recomputing. So the answer is 11.") == 0.0


test_check_rejects_rows_without_an_integer = broken_answers_test(
    family.check, family.NAME, ["", "eleven", "1.5"], question=P.question
)
