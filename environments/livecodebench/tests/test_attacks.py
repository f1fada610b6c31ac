"""Attack table for livecodebench: answers that must not earn reward (expected 0) and correct
answers written unusually (expected 1), graded by the real environment in real bubblewrap
sandboxes, all rows in one environment, concurrently."""

from __future__ import annotations

import json

import pytest
from livecodebench import load_environment

from verifiers.testing import assert_scored, grade_program_table

BIG = 10**18 + 1


def stdin(*pairs):
    return [{"input": i, "output": o, "testtype": "stdin"} for i, o in pairs]


def functional(*pairs):
    """(args, expected value) -> tests with one JSON line per argument, JSON output."""
    return [
        {
            "input": "\n".join(json.dumps(a) for a in args),
            "output": json.dumps(out),
            "testtype": "functional",
        }
        for args, out in pairs
    ]


def method(body):
    return "class Solution:\n    def f(self, *args):\n" + "".join(
        f"        {line}\n" for line in body.splitlines()
    )


DOUBLE = stdin(("3\n", "6\n"), ("500000000000000000\n", "1000000000000000000\n"))
HALF = stdin(("1\n", "0.5\n"))
TWO_LINES = stdin(("1\n", "1\n2\n"))
PAIR = stdin(("1\n", "0.5 2\n"))
LABELLED = stdin(("1\n", "Yes 0.5\n"))
JOIN = functional(([["a", "b"]], "a b"))
SUM = functional(([BIG - 1, 1], BIG))

# (name, tests, program, expected reward, metadata overrides)
ROWS = [
    # -- correct, including unusual but right forms: 1 ------------------------------------
    ("double", DOUBLE, "print(int(input()) * 2)", 1.0, {}),
    ("double-trailing-spaces", DOUBLE, "print(str(int(input()) * 2) + '   \\n\\n')", 1.0, {}),
    ("half-exact-other-form", HALF, "print('0.50')", 1.0, {}),
    ("two-lines-with-indent", TWO_LINES, "print(' 1')\nprint('2 ')", 1.0, {}),
    ("fn-exact-int", SUM, method("return args[0] + args[1]"), 1.0, {}),
    ("fn-tuple-for-list", functional(([1, 2], [2, 1])), method("return (args[1], args[0])"), 1.0, {}),
    ("fn-float-within-1e-6", functional(([1, 3], 0.3333333333)), method("return round(args[0] / args[1], 8)"), 1.0, {}),
    ("fn-string-exact", JOIN, method("return ' '.join(args[0])"), 1.0, {}),
    ("fn-float-for-int-where-accepted", functional(([9], 3)), method("return args[0] ** 0.5"), 1.0, {"comparison": {"int_accepts_float": True}}),
    ("stdout-float-for-int-where-accepted", DOUBLE, "print(float(int(input()) * 2))", 1.0, {"comparison": {"int_accepts_float": True}}),
    # stdout as LiveCodeBench's grade_stdio reads it: a differing line equal as decimals
    ("double-float-for-int", DOUBLE, "print(float(int(input()) * 2))", 1.0, {}),
    ("double-scientific", DOUBLE, "print(format(int(input()) * 2, 'e'))", 1.0, {}),
    ("pair-other-forms", PAIR, "print('0.50', '2.0')", 1.0, {}),
    # -- tolerance and string leniency: 0 ---------------------------------------------------
    ("pair-text-token-other-form", LABELLED, "print('Yes 0.50')", 0.0, {}),
    ("two-lines-carriage-return", TWO_LINES, "print('1\\r2')", 0.0, {}),
    ("half-infinity", HALF, "print('inf')", 0.0, {}),
    ("double-off-by-one-large", DOUBLE, "n = int(input())\nprint(2 * n + (n > 10))", 0.0, {}),
    ("half-close-not-exact", HALF, "print(0.5000001)", 0.0, {}),
    ("half-nan", HALF, "print('NaN')", 0.0, {}),
    ("two-lines-joined", TWO_LINES, "print('1 2')", 0.0, {}),
    ("fn-large-int-rel-tol", SUM, method("return args[0]"), 0.0, {}),
    ("fn-float-for-int", functional(([9], 3)), method("return args[0] ** 0.5"), 0.0, {}),
    ("fn-string-extra-space", JOIN, method("return '  '.join(args[0])"), 0.0, {}),
    ("fn-string-padded", JOIN, method("return ' ' + ' '.join(args[0]) + '\\n'"), 0.0, {}),
    ("fn-string-number-tolerance", functional(([1], "1.0000001")), method("return '1'"), 0.0, {}),
    ("fn-string-for-int", functional(([1], 3)), method("return '3'"), 0.0, {}),
    ("fn-bool-for-int", functional(([1], 1)), method("return True"), 0.0, {}),
    ("fn-no-singleton-unwrap", functional(([5], [5])), method("return 5"), 0.0, {}),
    # -- harness tricks: 0 ------------------------------------------------------------------
    ("fn-always-equal", functional(([1], 3)), "class E:\n    def __eq__(self, o): return True\n" + method("return E()"), 0.0, {}),
    ("early-exit", DOUBLE, "import sys\nsys.exit(0)", 0.0, {}),
    ("hardcoded-sample", DOUBLE, "print(6)", 0.0, {}),
]  # fmt: skip


@pytest.fixture(scope="module")
def graded():
    """The table graded once (at least 25 rows, each named once: the row tests' ids)."""

    def environment(provider):
        rows = []
        for name, tests, _program, _reward, meta in ROWS:
            fn = tests[0]["testtype"] == "functional"
            rows.append(
                {
                    "question_title": name,
                    "question_content": f"ROW<{name}>",
                    "platform": "leetcode" if fn else "atcoder",
                    "question_id": name,
                    "contest_date": "2024-10-01T00:00:00",
                    "starter_code": "class Solution:\n    def f(self, *args):\n" if fn else "",
                    "difficulty": "easy",
                    "public_test_cases": json.dumps(tests),
                    "private_test_cases": "",
                    "metadata": json.dumps({"func_name": "f", **meta} if fn else meta),
                }
            )
        return load_environment(source=rows, timeout_per_test=3, provider=provider, pool_size=4)

    return grade_program_table(
        ROWS,
        at_least=25,
        environment=environment,
        name_of=lambda row: row["info"]["question_id"],
        eval_split=True,
    )


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_attack_row(graded, row):
    name, _tests, _program, expected, _meta = row
    assert_scored(graded[name], expected, name)
