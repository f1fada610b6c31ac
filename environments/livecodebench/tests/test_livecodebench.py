"""livecodebench: private-test decoding (and refusing hostile pickles), release/date filters,
strict extraction, comparisons, broken rows, grading in real sandboxes, and a `vf-eval` run."""

from __future__ import annotations

import asyncio
import base64
import json
import math
import os
import pickle
import sys
import time
import zlib

import pytest
from livecodebench import (
    SAMPLE,
    decode_private_tests,
    encode_private_tests,
    extract_python,
    load_environment,
    prelude_for,
    process_row,
    release_files,
    stdout_matches,
)

import verifiers as vf
from verifiers.sandbox import Provider, SandboxCreationError
from verifiers.testing import ScriptedServer, bwrap_provider, jsonl_rows, row_state, run_vf_eval
from verifiers.testing.responders import last_text

SAMPLE_ROWS = jsonl_rows(SAMPLE)
ALL_DATES = {"start_date": None, "end_date": None}
SOLUTIONS = {r["question_id"]: json.loads(r["metadata"])["solutions"] for r in SAMPLE_ROWS}


def fence(code: str, lang: str = "python") -> str:
    return f"Solution:\n```{lang}\n{code}```\n"


# -- private test encoding ------------------------------------------------------------------
TESTS = [
    {"input": "1 2\n", "output": "3\n", "testtype": "stdin"},
    {"input": "[1,2]\n3", "output": "[0, 1]", "testtype": "functional"},
    {"input": "ünïcode\n" * 3, "output": "x" * 5000, "testtype": "stdin"},
]


def test_private_tests_round_trip():
    encoded = encode_private_tests(TESTS)
    assert encoded.isascii() and "input" not in encoded
    assert decode_private_tests(encoded) == TESTS
    assert decode_private_tests(json.dumps(TESTS)) == TESTS  # plain JSON rows
    assert decode_private_tests("") == [] and decode_private_tests(None) == []
    # the benchmark's layout: base64(zlib(pickle(json string)))
    assert json.loads(pickle.loads(zlib.decompress(base64.b64decode(encoded)))) == TESTS


class _Exploit:
    def __reduce__(self):
        return (os.system, ("touch /tmp/lcb-pwned-by-dataset",))


def _compress(obj) -> str:
    return base64.b64encode(zlib.compress(pickle.dumps(obj))).decode()


def test_hostile_pickles_are_refused_without_running():
    marker = "/tmp/lcb-pwned-by-dataset"
    if os.path.exists(marker):
        os.unlink(marker)
    with pytest.raises(vf.ConfigError, match=r"posix\.system|os\.system"):
        decode_private_tests(_compress(_Exploit()))
    assert not os.path.exists(marker)
    with pytest.raises(vf.ConfigError, match="builtins.eval"):
        decode_private_tests(_compress([eval]))
    with pytest.raises(vf.ConfigError, match="decompress to more than"):
        decode_private_tests(_compress("x" * 100_000), max_bytes=10_000)
    with pytest.raises(vf.ConfigError, match="neither JSON nor base64"):
        decode_private_tests("not base64 at all!")
    with pytest.raises(vf.ConfigError, match="zlib"):
        decode_private_tests(base64.b64encode(b"plain bytes").decode())
    with pytest.raises(vf.ConfigError, match="must be a list"):
        decode_private_tests(_compress(json.dumps({"input": "1"})))
    with pytest.raises(vf.ConfigError, match=r"\[0\]"):
        decode_private_tests(_compress(json.dumps([{"input": 1, "output": "1"}])))


# -- parsing and comparison -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("```python\nprint(1)\n```\nand\n```python\nprint(2)\n```", "print(2)\n"),
        ("```python\nprint(1)\n```\n```text\nout\n```", "print(1)\n"),  # other tags ignored
        ("```\nprint(1)\n```", None),  # strict: untagged blocks do not count
        ("<think>```python\nprint(0)\n```</think>```python\nprint(3)\n```", "print(3)\n"),
        ("<think>```python\nprint(0)\n```", None),  # reasoning never finished
        # the chat template opened the reasoning: only its `</think>` is in the text
        ("```python\nprint(0)\n```</think>```python\nprint(3)\n```", "print(3)\n"),
        # reasoning reopened after the answer and cut off: its code is not the answer
        ("<think>a</think>```python\nprint(1)\n```<think>```python\nprint(2)\n```", None),
        ("```python\n\n```", None),
        ("print(1)", None),
    ],
)
def test_extract_python(text, code):
    assert extract_python(text) == code


@pytest.mark.parametrize(
    ("actual", "expected", "ok"),
    [
        # right answers in the forms LiveCodeBench's grade_stdio accepts: 1
        ("3\n", "3", True),
        ("0.50\n", "0.5\n", True),  # equal as decimals
        ("5.0", "5", True),  # a float equal to an integer answer, as the benchmark's Decimal
        ("1e+18 0.5", "1000000000000000000 0.50", True),
        ("inf", "Infinity", True),
        ("1_000", "1000", True),  # what Decimal() reads
        ("1  2 \n 3\n", "1 2\n3", True),
        ("1 2\r\n3\r\n", "1 2\n3", True),  # "\r\n" endings: the "\r" is stripped
        ("NaN", "NaN", True),  # equal as text
        ("Yes 2", "Yes 2", True),
        # wrong ones: 0
        ("0.5001", "0.5", False),  # exact: no tolerance
        ("999999999999999999", "1000000000000000000", False),
        ("Yes 0.50", "Yes 0.5", False),  # a differing line must be all decimals
        ("nan", "NaN", False),  # a NaN equals nothing
        ("sNaN", "sNaN1", False),  # ... nor does a signalling one (no exception either)
        ("1 2 3", "1 2\n3", False),  # line breaks matter
        ("1\r2", "1\n2", False),  # a lone "\r" ends no line, as in the benchmark
        ("3\n3", "3", False),
        ("3 3", "3", False),
        ("Yes", "yes", False),
        ("", "0", False),
    ],
)
def test_stdout_matches(actual, expected, ok):
    """LiveCodeBench's grade_stdio (lcb_runner/evaluation/testing_util.py in
    LiveCodeBench/LiveCodeBench): stripped lines equal, else equal as lists of decimals."""
    assert stdout_matches(actual, expected) is ok


def test_prelude_imports_only_what_a_program_mentions():
    assert prelude_for("print(input())").splitlines() == [
        "import sys",
        "sys.setrecursionlimit(50000)",
    ]
    text = prelude_for("x: List[int] = []\nprint(gcd(4, 6), Counter(x), re.escape('a'))")
    limit = sys.getrecursionlimit()
    try:  # the prelude raises the recursion limit: keep it from leaking into later tests
        exec(compile(text, "<prelude>", "exec"), ns := {})
    finally:
        sys.setrecursionlimit(limit)
    assert {"List", "gcd", "Counter", "re", "sys"} <= ns.keys() and "deque" not in ns
    assert ns["Counter"].__module__ == "collections"  # collections' star import wins over typing


# -- dataset --------------------------------------------------------------------------------
def test_release_versions():
    assert release_files("release_v1") == ["test.jsonl"]
    assert (
        release_files("release_v6")[-1] == "test6.jsonl" and len(release_files("release_v6")) == 6
    )
    assert release_files("v5") == ["test5.jsonl"]
    assert release_files("v4_v6") == ["test4.jsonl", "test5.jsonl", "test6.jsonl"]
    for bad in ("release_v9", "v7", "latest", "v6_v4"):
        with pytest.raises(vf.ConfigError, match="release_version"):
            release_files(bad)


def ids(env):
    return [r["info"]["question_id"] for r in env.get_eval_dataset()]


def test_release_and_date_filters():
    in_window = [
        r["question_id"]
        for r in SAMPLE_ROWS
        if "2024-08-01" <= r["contest_date"][:10] <= "2025-05-01"
    ]
    assert ids(load_environment(source="sample")) == in_window and len(in_window) == 8
    assert len(ids(load_environment(source="sample", **ALL_DATES))) == len(SAMPLE_ROWS)
    v4 = ids(load_environment(source="sample", release_version="release_v4", **ALL_DATES))
    assert v4 == [r["question_id"] for r in SAMPLE_ROWS if r["version"] <= "v4"]
    assert set(ids(load_environment(source="sample", release_version="v6"))) == {
        "sx102_b", "sx105_d", "lc2002"
    }  # fmt: skip
    only = load_environment(source="sample", start_date="2025-01-18", end_date="2025-02-08")
    assert ids(only) == ["sx102_b", "lc2002"]  # both ends inclusive
    assert ids(load_environment(source="sample", difficulty="hard")) == ["sx105_d"]
    lc = ids(load_environment(source="sample", platform=["leetcode"], num_examples=2))
    assert lc == ["lc2001", "lc2002"]
    with pytest.raises(vf.ConfigError, match="no LiveCodeBench problems"):
        load_environment(source="sample", release_version="v1")  # v1 is before the window
    with pytest.raises(vf.ConfigError, match="ISO date"):
        load_environment(source="sample", start_date="August")


def test_rows_and_prompts():
    env = load_environment(source="sample", **ALL_DATES)
    rows = {r["info"]["question_id"]: r for r in env.get_eval_dataset()}
    system, user = rows["lc2002"]["prompt"]
    assert system["role"] == "system" and "expert Python programmer" in system["content"]
    assert "def countPairs(self, nums: List[int], k: int)" in user["content"]
    assert "standard input" in rows["sx101_a"]["prompt"][1]["content"]
    for raw in SAMPLE_ROWS:  # public + (decoded) private tests, all of them by default
        info = rows[raw["question_id"]]["info"]
        expected = len(json.loads(raw["public_test_cases"])) + len(
            decode_private_tests(raw["private_test_cases"])
        )
        assert info["num_test_cases"] == expected == len(json.loads(info["tests"])["inputs"])
    tests = json.loads(rows["lc2002"]["info"]["tests"])
    assert tests["fn_name"] == "countPairs" and tests["outputs"][0] == 4  # decoded JSON value
    sub = load_environment(source="sample", max_num_tests=3, **ALL_DATES)
    assert max(r["info"]["num_test_cases"] for r in sub.get_eval_dataset()) == 3


BASE = SAMPLE_ROWS[6]  # lc2001, functional


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"question_content": ""}, "question_content"),
        ({"public_test_cases": "[", "private_test_cases": ""}, "not valid JSON"),
        ({"public_test_cases": "[]", "private_test_cases": ""}, "no public or private tests"),
        ({"metadata": "{}"}, "func_name"),
        ({"private_test_cases": "%%%"}, "neither JSON nor base64"),
        (
            {
                "private_test_cases": json.dumps(
                    [{"input": "1", "output": "1", "testtype": "stdin"}]
                )
            },
            "mixes functional and stdin",
        ),
        (
            {
                "public_test_cases": json.dumps(
                    [{"input": "[1]", "output": "{", "testtype": "functional"}]
                )
            },
            "functional output is not JSON",
        ),
    ],
)
def test_broken_rows_give_clear_errors(change, message):
    with pytest.raises(vf.ConfigError, match=message):
        process_row({**BASE, **change}, 3, None, 42)
    with pytest.raises(vf.ConfigError, match="lc2001"):
        process_row({**BASE, **change}, 3, None, 42)


def test_missing_columns_are_named():
    row = {k: v for k, v in BASE.items() if k != "starter_code"}
    with pytest.raises(vf.ConfigError, match="starter_code"):
        load_environment(source=[row])


# -- grading in sandboxes -------------------------------------------------------------------
# The sandbox tests need the local bwrap provider (`bwrap_provider`: they fail, not skip,
# where it cannot run). The vf-eval tests use whatever `default_provider()` picks.


@pytest.fixture
async def provider():
    async with bwrap_provider() as p:
        yield p


async def test_right_and_wrong_solutions(provider):
    env = load_environment(
        source="sample", timeout_per_test=3, provider=provider, pool_size=4, **ALL_DATES
    )
    rows = list(env.get_eval_dataset())
    states = []
    for row in rows:
        sol = SOLUTIONS[row["info"]["question_id"]]
        states.append(row_state(row, fence(sol["correct"])))
        states.append(row_state(row, fence(sol["wrong"])))
    await asyncio.gather(*(env.rubric.score_rollout(s) for s in states))
    for i, s in enumerate(states):
        detail = (rows[i // 2]["info"]["question_id"], s.get("error"), s.get("test_results"))
        assert s.get("error") is None, detail
        assert s["reward"] == (1.0 if i % 2 == 0 else 0.0), detail
        assert s["metrics"]["num_test_cases"] == rows[i // 2]["info"]["num_test_cases"]
    await env.teardown()


async def test_strictness_loops_and_crashes(provider):
    env = load_environment(source="sample", timeout_per_test=2, provider=provider, pool_size=3)
    row = next(r for r in env.get_eval_dataset() if r["info"]["question_id"] == "sx102_b")
    right = SOLUTIONS["sx102_b"]["correct"]
    cases = {
        "untagged": ("```\n" + right + "```", "no_code"),
        "no_code": ("The answer is to use greedy coins.", "no_code"),
        "syntax": (fence("x = = 1\n"), "runtime_error"),
        "loop": (fence("while True:\n    pass\n"), "timeout"),
    }
    # starter-code style with no imports of its own: the prelude provides List and friends
    func_row = next(r for r in env.get_eval_dataset() if r["info"]["question_id"] == "lc2001")
    prelude_user = row_state(
        func_row,
        fence(
            "class Solution:\n    def maxProfit(self, prices: List[int]) -> int:\n"
            "        lows = list(accumulate(prices, min))\n"
            "        return max(p - lo for p, lo in zip(prices, lows))\n"
        ),
    )
    states = [row_state(row, text) for text, _ in cases.values()]
    t0 = time.perf_counter()
    await asyncio.gather(*(env.rubric.score_rollout(s) for s in [*states, prelude_user]))
    elapsed = time.perf_counter() - t0
    assert prelude_user["reward"] == 1.0, prelude_user["test_results"]
    for (name, (_, status)), s in zip(cases.items(), states, strict=True):
        assert s.get("error") is None and s["reward"] == 0.0, name
        assert s["test_results"][0]["status"] == status, (name, s["test_results"][0])
    assert elapsed < 2 + 5  # the loop costs one timeout, not one per test
    await env.teardown()


class BrokenProvider(Provider):
    name = "broken"

    async def create(self, spec=None):
        raise SandboxCreationError("injected: cannot start")


async def test_sandbox_that_cannot_start_is_masked():
    env = load_environment(source="sample", provider=BrokenProvider(), pool_size=0)
    row = next(iter(env.get_eval_dataset()))
    s = row_state(row, fence(SOLUTIONS[row["info"]["question_id"]]["wrong"]))
    await env.rubric.score_rollout(s)
    assert s["error"]["infra"] is True and math.isnan(s["reward"])
    await env.teardown()


def test_vf_eval_against_the_scripted_server(tmp_path):
    rows = SAMPLE_ROWS[:3]  # sx101_a right, sx102_b wrong, sx103_a right
    answers = {}
    for i, r in enumerate(rows):
        sol = SOLUTIONS[r["question_id"]]
        answers[r["question_content"]] = fence(sol["wrong" if i == 1 else "correct"])

    def responder(body):
        text = last_text(body)
        return next(a for q, a in answers.items() if q in text)

    with ScriptedServer(responder) as srv:
        out, meta = run_vf_eval(
            tmp_path, "livecodebench", srv.base_url, "-n", 3, "-r", 2,
            "--env-args", json.dumps({"source": "sample", "timeout_per_test": 3, "pool_size": 2}),
        )  # fmt: skip
    assert len(out) == 6 and meta["env_id"] == "livecodebench"
    rewards = {}
    for row in out:
        assert row.get("error") is None, row["error"]
        rewards.setdefault(row["info"]["question_id"], set()).add(row["reward"])
    assert rewards == {"sx101_a": {1.0}, "sx102_b": {0.0}, "sx103_a": {1.0}}
