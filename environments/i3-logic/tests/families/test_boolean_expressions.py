"""boolean_expressions: SynLogic's labelled options, answer = labels of the true ones."""

from __future__ import annotations

import ast
import json
import re

import pytest
from i3_logic import Puzzle, generate, puzzle_from_info, verify
from i3_logic.families import boolean_expressions as fam
from i3_logic_testkit import (
    ARITHMETIC,
    COMPARISONS,
    broken_answers_test,
    real_rows,
    replies_test,
)

# The factual statements used in the rows file, with their truth.
FACTS = {
    "Water freezes at 0 degrees Celsius at sea level.": True,
    "Owls are reptiles.": False,
    "Iron is a metal.": True,
    "The Moon is larger than the Earth.": False,
}


def value(node: ast.AST):
    """An independent evaluator (Python's own parser, a whitelist walk)."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp):
        inner = value(node.operand)
        return (not inner) if isinstance(node.op, ast.Not) else -inner
    if isinstance(node, ast.BoolOp):
        values = [value(v) for v in node.values]
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.Compare):
        (op,), (right,) = node.ops, node.comparators
        return COMPARISONS[type(op)](value(node.left), value(right))
    if isinstance(node, ast.BinOp):
        return ARITHMETIC[type(node.op)](value(node.left), value(node.right))
    raise ValueError(ast.dump(node))


def true_labels(question: str) -> str:
    labels = []
    for label, expr in re.findall(r"^([A-H])\. (.+)$", question, re.MULTILINE):
        for fact, truth in FACTS.items():
            expr = expr.replace(fact, str(truth))
        if value(ast.parse(expr, mode="eval").body):
            labels.append(label)
    return ",".join(labels)


@pytest.mark.parametrize("row", real_rows("boolean_expressions"))
def test_rows_answers_are_the_true_options(row):
    pz = puzzle_from_info(row["info"])
    assert pz.metadata == {}  # upstream stores no metadata
    assert pz.answer == true_labels(row["question"])


def test_generated_puzzles_agree_with_the_independent_evaluator():
    for lvl in (1, 2, 3):
        for i in range(20):
            pz = generate("boolean_expressions", 4, lvl, i)
            assert pz.answer == true_labels(pz.question)
            assert verify(pz, f"\\boxed{{{pz.answer}}}") == 1.0


def test_null_metadata_of_real_rows_loads():
    data = json.dumps({"question": "q", "answer": "B,D", "difficulty": 1, "metadata": None})
    pz = puzzle_from_info({"task": "boolean_expressions", "game_data_str": data})
    assert pz.metadata == {} and verify(pz, "\\boxed{D, B}") == 1.0


test_verdicts = replies_test(
    Puzzle("boolean_expressions", "q", "A,C", 1, {}),
    [
        ("\\boxed{A,C}", 1.0),
        ("\\boxed{a, c}", 1.0),
        ("<answer>C;A</answer>", 1.0),
        ("\\boxed{\\text{A, C}}", 1.0),
        ("\\boxed{['A', 'C']}", 1.0),
        ("\\boxed{A，C}", 1.0),  # the Chinese prompts ask for commas too
        ("\\boxed{A,A,C}", 0.0),  # upstream's letter-set comparison passed this
        ("\\boxed{CA}", 0.0),  # and this
        ("\\boxed{A and C}", 0.0),
        ("\\boxed{A, C or D}", 0.0),
        ("\\boxed{A}", 0.0),
        ("\\boxed{A,C,E}", 0.0),
        ("\\boxed{}", 0.0),
        ("A, C", 0.0),  # prose: no answer block
        ("\\boxed{" + "A," * 3000 + "C}", 0.0),
    ],
)


test_check_rejects_broken_answers = broken_answers_test(
    fam.check, "boolean_expressions", ["", "A,,C", "A,Z", "A,A", "AC", "True"]
)
