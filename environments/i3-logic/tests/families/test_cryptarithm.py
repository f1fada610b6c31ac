"""cryptarithm: rows solved by brute force (each has exactly one solution, as SynLogic's
generator requires), operators with precedence, answer forms, Chinese labels, broken rows."""

from __future__ import annotations

import pytest
from i3_logic import Puzzle, puzzle_from_info, verify
from i3_logic.families import cryptarithm
from i3_logic_testkit import (
    broken_metadata_test,
    generated_in_row_layout,
    real_rows,
    replies_test,
    row_params,
)

from verifiers.testing import assert_replies_scored

ROWS = real_rows("cryptarithm")


def holds(numbers: list[int], ops: list[str]) -> bool:
    """The equation with Python's own precedence (the operators are + - *)."""
    text = str(numbers[0]) + "".join(f" {op} {n}" for op, n in zip(ops, numbers[1:-1], strict=True))
    left = 0
    for term in text.split(" + "):  # a tiny evaluator: sums of differences of products
        parts = term.split(" - ")
        value = _product(parts[0]) - sum(_product(p) for p in parts[1:])
        left += value
    return left == numbers[-1]


def _product(text: str) -> int:
    out = 1
    for factor in text.split(" * "):
        out *= int(factor)
    return out


def solutions(words: list[str], ops: list[str]) -> list[list[int]]:
    """Every assignment that makes the equation hold: backtracking over letters from the
    rightmost column, pruned because the equation modulo 10^k only depends on the last k digits
    of each number (true for + - *); complete assignments are checked by ``holds``."""
    order: list[str] = []
    for k in range(1, max(map(len, words)) + 1):
        order += [w[-k] for w in words if len(w) >= k and w[-k] not in order]
    leading = {w[0] for w in words if len(w) > 1}
    found: list[list[int]] = []
    m: dict[str, int] = {}

    def tail(w: str, k: int) -> int:
        return int("".join(str(m[c]) for c in w[-k:]))

    def consistent() -> bool:
        k = 1
        while all(c in m for w in words for c in w[-k:]) and k <= max(map(len, words)):
            nums = [tail(w, k) for w in words]
            if not _mod_holds(nums, ops, 10**k):
                return False
            k += 1
        return True

    def go(i: int) -> None:
        if i == len(order):
            numbers = [int("".join(str(m[c]) for c in w)) for w in words]
            if holds(numbers, ops):
                found.append(numbers)
            return
        for d in set(range(10)) - set(m.values()):
            if d == 0 and order[i] in leading:
                continue
            m[order[i]] = d
            if consistent():
                go(i + 1)
            del m[order[i]]

    go(0)
    return found


def _mod_holds(nums: list[int], ops: list[str], mod: int) -> bool:
    terms, signs = [nums[0]], []
    for op, n in zip(ops, nums[1:-1], strict=True):
        if op == "*":
            terms[-1] *= n
        else:
            terms.append(n)
            signs.append(1 if op == "+" else -1)
    left = terms[0] + sum(s * t for s, t in zip(signs, terms[1:], strict=True))
    return (left - nums[-1]) % mod == 0


@pytest.mark.parametrize("row,pz", row_params("cryptarithm"))
def test_rows_have_one_solution_and_right_replies_are_right(row, pz):
    meta = pz.metadata
    words, ops = meta["letter_words"], meta["operators"]
    assert solutions(words, ops) == [meta["numbers"]]
    assert {
        c: d
        for w, n in zip(words, meta["numbers"], strict=True)
        for c, d in zip(w, map(int, str(n)), strict=True)
    } == meta["digit_map"]
    assert pz.answer.replace(" ", "") == "".join(
        [
            str(meta["numbers"][0]),
            *(f"{o}{n}" for o, n in zip(ops, meta["numbers"][1:-1], strict=True)),
            f"={meta['numbers'][-1]}",
        ]
    )
    assert meta["num_letter"] == len(set("".join(words))) and meta["operator_num"] == len(ops)
    assert_replies_scored(lambda reply: verify(pz, reply), row["_right"], row["_wrong"])


def test_rows_cover_each_operator_and_a_chinese_prompt():
    ops = {op for r in ROWS for op in puzzle_from_info(r["info"]).metadata["operators"]}
    assert ops == {"+", "-", "*"}
    assert any("答案是" in r["question"] for r in ROWS)


# 12 * 3 + 45 = 81 spelled AB * C + DE = FA (A=1, B=2, C=3, D=4, E=5, F=8).
MIXED = Puzzle(
    "cryptarithm", "q", "", 1, {"letter_words": ["AB", "C", "DE", "FA"], "operators": ["*", "+"]}
)


test_mixed_operators_and_forms = replies_test(
    MIXED,
    [
        ("The answer is 12 * 3 + 45 = 81.", 1.0),
        ("The answer is 12×3+45=81", 1.0),
        ("The answer is $12 \\times 3 + 45 = 81$.", 1.0),
        ("答案是 12 * 3 + 45 = 81。", 1.0),
        ("答案：12 * 3 + 45 = 81", 1.0),
        ("The answer is A=1, B=2, C=3, D=4, E=5, F=8.", 1.0),
        ("The answer is 12 + 3 * 45 = 81.", 0.0),  # operators swapped
        ("The answer is 12 * 3 + 45 = 82.", 0.0),
        ("The answer is 12 * 3 + 45 = 81 or 12 * 3 + 46 = 82.", 0.0),
        ("The answer is 12 * 3 + 45.", 0.0),
        ("12 * 3 + 45 = 81", 0.0),  # no answer block: upstream searched the whole text
        ("The answer is A=1, B=2, C=3, D=4, E=5.", 0.0),  # F missing
        ("The answer is 12 * 3 + 45 = 81 (A=1, B=2, C=3, D=4, E=5, F=9)", 0.0),  # disagree
        ("The answer is " + "1" * 5000, 0.0),
        ("答案是", 0.0),
    ],
)


def test_subtraction_and_leading_zeros():
    p = Puzzle("cryptarithm", "q", "", 1, {"letter_words": ["AB", "C", "DA"], "operators": ["-"]})
    assert verify(p, "The answer is 31 - 4 = 27.") == 0.0  # D would be 2 and A both 1 and 7
    assert verify(p, "The answer is 20 - 8 = 12.") == 1.0
    assert [20, 8, 12] in solutions(["AB", "C", "DA"], ["-"])
    assert verify(p, "The answer is 05 - 4 = 01.") == 0.0  # leading zeros


test_check_rejects_broken_rows = broken_metadata_test(
    cryptarithm.check,
    "cryptarithm",
    [
        {},
        {"letter_words": ["AB", "CD", "EF"]},
        {"letter_words": ["AB", "CD"], "operators": []},
        {"letter_words": ["AB", "cd", "EF"], "operators": ["+"]},
        {"letter_words": ["AB", "CD", "EF"], "operators": ["/"]},
        {"letter_words": ["AB", "CD", "EF"], "operators": ["+", "+"]},
        {"letter_words": ["ABCDE", "FGHIJ", "KA"], "operators": ["+"]},  # 11 letters
        {"equation": "AB + CD = EF"},  # this package's old layout
    ],
)


def test_generated_puzzles_use_synlogic_layout():
    for pz in generated_in_row_layout("cryptarithm", 4):
        meta = pz.metadata
        assert holds(meta["numbers"], meta["operators"])
        assert verify(pz, f"<answer>{pz.answer}</answer>") == 1.0
