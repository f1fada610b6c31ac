"""Game of 24 / mathador: real-format rows re-judged independently, answer forms, pinned fixes."""

from __future__ import annotations

import ast
import itertools
import json
import re
from fractions import Fraction

import pytest
from i3_logic import Puzzle, verify
from i3_logic.families import game_of_24
from i3_logic_testkit import (
    ARITHMETIC,
    broken_metadata_test,
    generated_in_row_layout,
    real_rows,
    row_params,
)

ROWS = real_rows("game_of_24")


def judge(numbers: list[int], result: int, expression: str) -> bool:
    """Python's own parser, exact fractions: every given number once, value equals result."""
    used: list[int] = []

    def value(node: ast.AST) -> Fraction:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            used.append(node.value)
            return Fraction(node.value)
        if isinstance(node, ast.BinOp) and type(node.op) in ARITHMETIC:
            return ARITHMETIC[type(node.op)](value(node.left), value(node.right))
        raise ValueError(ast.dump(node))

    try:
        got = value(ast.parse(expression, mode="eval").body)
    except (ValueError, SyntaxError, ZeroDivisionError):
        return False
    return got == result and sorted(used) == sorted(numbers)


def reply_expression(reply: str) -> str:
    tags = re.findall(r"<answer>(.*?)</answer>", reply, re.DOTALL)
    if tags:
        return tags[-1].strip()
    fences = re.findall(r"```python\n(.*?)```", reply, re.DOTALL)
    if fences:
        return fences[-1].strip()
    return re.split(r"The answer is|答案是", reply)[-1].strip()  # the label forms


def fold(nums: tuple[int, ...], ops: tuple[str, ...]) -> Fraction:
    value = Fraction(nums[0])
    for op, n in zip(ops, nums[1:], strict=True):
        value = {"+": value + n, "-": value - n, "*": value * n, "/": value / n}[op]
    return value


@pytest.mark.parametrize("row,pz", row_params("game_of_24"))
def test_rows_are_valid_puzzles_and_right_replies_are_right(row, pz):
    meta = pz.metadata
    assert meta["numbers"] == sorted(meta["numbers"])  # SynLogic sorts them
    assert meta["num_of_numbers"] == len(meta["numbers"])
    # SynLogic's solution strings: a permutation folded left to right with these operators.
    for solution in meta["solutions"]:
        m = re.fullmatch(r"nums: (\(.*\)), ops: (\(.*\))", solution)
        assert m, solution
        nums, ops = ast.literal_eval(m.group(1)), ast.literal_eval(m.group(2))
        assert sorted(nums) == meta["numbers"] and fold(nums, ops) == meta["result"]
    for reply in row["_right"]:
        assert judge(meta["numbers"], meta["result"], reply_expression(reply)), reply
        assert verify(pz, reply) == 1.0, reply
    for reply in row["_wrong"]:
        assert verify(pz, reply) == 0.0, reply


def test_rows_cover_every_task_key():
    tasks = {json.loads(r["info"])["task"] for r in ROWS}
    assert tasks == {"mathador", "game_of_24", "game24"}
    assert sum(json.loads(r["info"])["task"] == "mathador" for r in ROWS) >= 2


P = Puzzle(
    "mathador",
    "q",
    "",
    1,
    {"numbers": [5, 7, 8, 9], "result": 24, "operators": ["+", "-", "*", "/"]},
)


def fenced(expr: str) -> str:
    return f"Some reasoning.\n```python\n{expr}\n```"


def test_every_solution_of_a_small_puzzle_is_accepted_and_nothing_else():
    """All expressions of four numbers (each placement of + - * / and parentheses): the verifier
    agrees with the judge on every one."""
    numbers = [5, 7, 8, 9]
    shapes = [
        "(({a} {x} {b}) {y} {c}) {z} {d}",
        "({a} {x} {b}) {y} ({c} {z} {d})",
        "({a} {x} ({b} {y} {c})) {z} {d}",
        "{a} {x} (({b} {y} {c}) {z} {d})",
        "{a} {x} ({b} {y} ({c} {z} {d}))",
    ]
    right = 0
    for a, b, c, d in set(itertools.permutations(numbers)):
        for x, y, z in itertools.product("+-*/", repeat=3):
            for shape in shapes:
                expr = shape.format(a=a, b=b, c=c, d=d, x=x, y=y, z=z)
                want = judge(numbers, 24, expr)
                right += want
                assert verify(P, fenced(expr)) == float(want), expr
    assert right > 0


def test_upstream_self_comparison_bug_stays_fixed():
    # Right numbers, value 12: SynLogic's checker compared the result with itself and said yes.
    assert verify(P, fenced("(5 + 7) * (9 - 8)")) == 0.0
    assert verify(P, fenced("8 * (5 + 7 - 9)")) == 1.0


def test_python_block_is_the_answer_unless_answer_tags():
    assert verify(P, "I guess \\boxed{24}.\n" + fenced("8 * (5 + 7 - 9)")) == 1.0
    assert verify(P, fenced("8 * (5 + 7 - 9)") + "\n<answer>(5 + 7) * (9 - 8)</answer>") == 0.0
    assert verify(P, fenced("(5 + 7) * (9 - 8)") + "\n<answer>8 * (5 + 7 - 9)</answer>") == 1.0
    # Earlier blocks are reasoning; the last one counts.
    assert verify(P, fenced("(5 + 7) * (9 - 8)") + "\n" + fenced("8 * (5 + 7 - 9)")) == 1.0
    assert verify(P, fenced("8 * (5 + 7 - 9)") + "\n" + fenced("(5 + 7) * (9 - 8)")) == 0.0


@pytest.mark.parametrize(
    "expr",
    [
        "",  # empty block
        "8 ** (5 + 7 - 9) / 21",  # powers (upstream let "**" through when "*" was allowed)
        "(8 * (5 + 7 - 9)) // 1",  # floor division
        "-8 * -(5 + 7 - 9)",  # unary minus
        "8 * (5 + 7 - 9) or 5 + 7 + 8 + 9",  # a hedge
        "8 * (5 + 7 - 9); 5 + 7 + 8 + 9",
        "print(8 * (5 + 7 - 9))",
        "9**9**9**9",
        "(" * 3000 + "8" + ")" * 3000,
        "8 * (5 + 7 - 9) + " + " + ".join(["0"] * 2000),  # oversized
    ],
)
def test_malformed_hedged_and_hostile_blocks_score_zero(expr):
    assert verify(P, fenced(expr)) == 0.0


def test_operators_in_metadata_restrict_the_answer():
    only_plus = Puzzle(
        "mathador", "q", "", 1, {"numbers": [4, 5, 6, 9], "result": 24, "operators": ["+"]}
    )
    assert verify(only_plus, fenced("4 + 5 + 6 + 9")) == 1.0
    assert verify(only_plus, fenced("(9 - 5) * 6 + 0 * 4")) == 0.0
    modulo = Puzzle(
        "mathador", "q", "", 1, {"numbers": [5, 7, 24], "result": 26, "operators": ["+", "%"]}
    )
    assert verify(modulo, fenced("24 + 7 % 5")) == 1.0  # % as Python reads it


test_check_rejects_broken_metadata = broken_metadata_test(
    game_of_24.check,
    "mathador",
    [
        {"result": 24},
        {"numbers": [], "result": 24},
        {"numbers": [1, "2"], "result": 24},
        {"numbers": [1, 2], "result": "24"},
        {"numbers": [1, 2], "result": 24, "operators": ["+", "^"]},
        {"numbers": [1, 2], "result": 24, "operators": "+-"},
        {"numbers": [-1, 2], "result": 24},
    ],
)


def test_generated_puzzles_use_synlogic_layout():
    for pz in generated_in_row_layout("game_of_24", 3):
        meta = pz.metadata
        assert meta["numbers"] == sorted(meta["numbers"])
        assert judge(meta["numbers"], meta["result"], meta["solutions"][0])
        assert verify(pz, fenced(meta["solutions"][0])) == 1.0
