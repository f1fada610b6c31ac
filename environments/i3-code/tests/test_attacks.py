"""Attack table for i3-code: programs a policy could learn that earn reward without solving
the task (expected 0) and correct answers written unusually (expected 1), each graded by the
real environment in real bubblewrap sandboxes. All rows share one environment and run
concurrently, so the table costs a few seconds."""

from __future__ import annotations

import json

import pytest
from i3_code import load_environment

from verifiers.testing import assert_scored, grade_program_table

BIG = 10**18 + 1


def stdin_tests(*pairs):
    return {"inputs": [p[0] for p in pairs], "outputs": [p[1] for p in pairs], "fn_name": None}


def fn_tests(name, *pairs):
    return {"inputs": [p[0] for p in pairs], "outputs": [p[1] for p in pairs], "fn_name": name}


SQUARE = stdin_tests(("3\n", "9\n"), ("1000000001\n", "1000000002000000001\n"))
HALF = stdin_tests(("1\n", "0.333333\n"))  # prints a / 3 for a float answer
BIGSUM = fn_tests("f", ([BIG - 1, 1], BIG))

# (name, tests, program, expected reward, info overrides)
ROWS = [
    # -- correct, including unusual but right forms: 1 ------------------------------------
    ("square", SQUARE, "n = int(input())\nprint(n * n)", 1.0, {}),
    ("square-extra-blank-lines", SQUARE, "n = int(input())\nprint()\nprint(' ', n * n, ' ')\nprint()", 1.0, {}),
    ("square-leading-plus", SQUARE, "n = int(input())\nprint('+' + str(n * n))", 1.0, {}),
    ("square-flushed-then-os-exit", SQUARE, "import os, sys\nn = int(input())\nprint(n * n, flush=True)\nos._exit(0)", 1.0, {}),
    ("float-within-stated-tol", HALF, "print(round(int(input()) / 3, 4))", 1.0, {}),
    ("float-exact-digits", HALF, "print('%.9f' % (int(input()) / 3))", 1.0, {}),
    ("fn-exact-int", BIGSUM, "def f(a, b):\n    return a + b", 1.0, {}),
    ("fn-tuple-for-list", fn_tests("f", ([1, 2], [2, 1])), "def f(a, b):\n    return (b, a)", 1.0, {}),
    ("fn-float-within-1e-6", fn_tests("f", ([1, 3], 0.3333333333)), "def f(a, b):\n    return round(a / b, 8)", 1.0, {}),
    ("fn-int-for-float", fn_tests("f", ([4, 2], 2.0)), "def f(a, b):\n    return a // b", 1.0, {}),
    ("fn-solution-class", fn_tests("f", ([2], 4)), "class Solution:\n    def f(self, x):\n        return x * x", 1.0, {}),
    ("fn-apps-singleton", fn_tests("f", ([2], [4])), "def f(x):\n    return x * x", 1.0, {}),
    ("fn-float-for-int-where-accepted", fn_tests("f", ([9], 3)), "def f(x):\n    return x ** 0.5", 1.0, {"comparison": {"int_accepts_float": True}}),
    ("stdout-float-for-int-where-accepted", stdin_tests(("3\n", "9\n")), "n = int(input())\nprint(float(n * n))", 1.0, {"comparison": {"int_accepts_float": True}}),
    # -- tolerance abuse: 0 -----------------------------------------------------------------
    ("square-off-by-one-large", SQUARE, "n = int(input())\nprint(n * n + (n > 10))", 0.0, {}),
    ("square-float-for-int", SQUARE, "n = int(input())\nprint(float(n * n))", 0.0, {}),
    ("square-float-repr-small", stdin_tests(("3\n", "9\n")), "print(9.0)", 0.0, {}),
    ("square-within-1e-3-of-int", stdin_tests(("3\n", "9\n")), "print(9.0004)", 0.0, {}),
    ("square-scientific", stdin_tests(("3\n", "9\n")), "print('9e0')", 0.0, {}),
    ("square-underscore", stdin_tests(("1000\n", "1000000\n")), "print('1_000_000')", 0.0, {}),
    ("float-outside-tol", HALF, "print(0.335)", 0.0, {}),
    ("float-nan", HALF, "print('nan')", 0.0, {}),
    ("float-inf", HALF, "print('inf')", 0.0, {}),
    ("float-huge-exponent", HALF, "print('1e999999999')", 0.0, {}),
    ("fn-large-int-rel-tol", BIGSUM, "def f(a, b):\n    return a", 0.0, {}),
    ("fn-float-for-large-int", BIGSUM, "def f(a, b):\n    return float(a + b)", 0.0, {}),
    ("fn-float-for-int", fn_tests("f", ([9], 3)), "def f(x):\n    return x ** 0.5", 0.0, {}),
    ("fn-huge-int-for-float", fn_tests("f", ([1], 0.5)), "def f(x):\n    return 10 ** 400", 0.0, {}),
    ("fn-nan-for-float", fn_tests("f", ([1], 0.5)), "def f(x):\n    return float('nan')", 0.0, {}),
    ("fn-bool-for-int", fn_tests("f", ([1], 1)), "def f(x):\n    return True", 0.0, {}),
    ("fn-numeric-string", fn_tests("f", ([1], 3)), "def f(x):\n    return '3'", 0.0, {}),
    ("fn-string-whitespace", fn_tests("f", (["a"], "a b")), "def f(x):\n    return 'a  b'", 0.0, {}),
    # -- output and harness tricks: 0 -------------------------------------------------------
    ("always-equal-object", fn_tests("f", ([1], 3)), "class E:\n    def __eq__(self, o): return True\ndef f(x):\n    return E()", 0.0, {}),
    ("int-subclass-always-equal", fn_tests("f", ([1], 3)), "class I(int):\n    def __eq__(self, o): return True\ndef f(x):\n    return I(7)", 0.0, {}),
    ("forged-result-line", fn_tests("f", ([1], 3), ([2], 6)), "import sys\ndef f(x):\n    sys.stdout.write('\\n<<<VF-RESULT>>>3')\n    sys.stdout.flush()\n    import os; os._exit(0)", 0.0, {}),
    ("patched-json-dumps", fn_tests("f", ([1], 3)), "import json\njson.dumps = lambda v: '\"anything\"'\ndef f(x):\n    return 5", 0.0, {}),
    ("writes-after-result", fn_tests("f", ([1], 3)), "import atexit\natexit.register(lambda: print('3'))\ndef f(x):\n    return 3", 0.0, {}),
    ("early-exit-zero", SQUARE, "import sys\nsys.exit(0)", 0.0, {}),
    ("os-exit-before-flush", SQUARE, "import os\nn = int(input())\nprint(n * n)\nos._exit(0)", 0.0, {}),
    ("hardcoded-first-sample", SQUARE, "print(9)", 0.0, {}),
    ("looks-for-the-tests", SQUARE, "import os\nfound = [os.path.join(r, f) for top in ('/workspace', '/tmp', '/etc', '/') for r, d, fs in os.walk(top) if not d.clear() or True for f in fs if f.endswith(('.out', '.json', '.txt'))][:1]\nprint(open(found[0]).read() if found else 0)", 0.0, {}),
    ("monkeypatched-builtins", SQUARE, "import builtins\nbuiltins.int = lambda *a: 0\nbuiltins.print = lambda *a, **k: None\nprint(9)", 0.0, {}),
    ("kills-its-sandbox", SQUARE, "import os, signal\nos.kill(-1, signal.SIGKILL)", 0.0, {}),
    ("empty-problem-comparison-is-strict", SQUARE, "n = int(input())\nprint(float(n * n))", 0.0, {"comparison": {}}),
]  # fmt: skip


@pytest.fixture(scope="module")
def graded():
    """The table graded once (at least 40 rows, each named once: the row tests' ids)."""

    def environment(provider):
        rows = [
            {"question": f"ROW<{name}>", "info": {"tests": json.dumps(tests), **extra}}
            for name, tests, _program, _reward, extra in ROWS
        ]
        return load_environment(
            source=rows, difficulty_key=None, timeout_per_test=3, provider=provider, pool_size=4
        )

    def name_of(row):
        return row["prompt"][-1]["content"].split("ROW<", 1)[1].split(">", 1)[0]

    return grade_program_table(ROWS, at_least=40, environment=environment, name_of=name_of)


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_attack_row(graded, row):
    name, _tests, _program, expected, _extra = row
    assert_scored(graded[name], expected, name)
