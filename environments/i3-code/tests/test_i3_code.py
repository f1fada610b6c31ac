"""i3-code: parsing, comparison, deterministic test subsample, dataset validation, and grading
in real bubblewrap sandboxes (right and wrong solutions, timeouts, containment, infra
failures), plus one `vf-eval` run against the scripted server."""

from __future__ import annotations

import asyncio
import json
import math
import time

import pytest
from i3_code import (
    SAMPLE,
    load_environment,
    outputs_equivalent,
    prelude_for,
    process_row,
    select_tests,
    strip_reasoning,
)

import verifiers as vf
from verifiers.sandbox import Provider, SandboxCreationError
from verifiers.testing import ScriptedServer, bwrap_provider, jsonl_rows, row_state, run_vf_eval
from verifiers.testing.responders import last_text

SAMPLE_ROWS = jsonl_rows(SAMPLE)
SOLUTIONS = {r["question"]: json.loads(r["info"])["solutions"] for r in SAMPLE_ROWS}


def fence(code: str, lang: str = "python") -> str:
    return f"Here is my solution.\n```{lang}\n{code}```\n"


# -- pure functions ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("actual", "expected", "ok"),
    [
        ("3\n", "3", True),
        ("  1 2 3  \n\n", "1 2 3\n", True),  # trimmed
        ("a\n\n b \n", "a\nb", True),  # line-wise, blank lines dropped
        ("1   2\n3", "1 2\n3", True),  # token-wise
        ("0.3334", "0.333333", True),  # within 1e-3
        ("0.343", "0.333", False),  # 1e-2 off
        ("1 2", "1 2 3", False),
        ("1 2 3", "1\n2 3", False),  # line layout matters
        ("yes", "Yes", False),
        ("nan", "nan", True),
        ("inf", "1e400", False),
        ("", "0", False),
    ],
)
def test_output_comparison(actual, expected, ok):
    assert outputs_equivalent(actual, expected) is ok


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("<think>plan</think>final", "final"),
        ("reasoning the template opened</think>final", "final"),
        ("<think>a</think>b</think>c", "c"),
        ("<think>never closed ```python\nprint(1)\n```", ""),
        ("no reasoning at all", "no reasoning at all"),
    ],
)
def test_strip_reasoning(text, answer):
    assert strip_reasoning(text) == answer


def test_prelude_imports_only_what_a_program_mentions():
    assert prelude_for("print(sum(map(int, input().split())))") == ""
    code = "def f(xs: List[int]):\n    return math.gcd(*xs), defaultdict(list), sys.maxsize"
    assert prelude_for(code).splitlines() == [
        "import sys, math",
        "from collections import defaultdict",
        "from typing import List",
    ]


def test_subsample_is_deterministic_and_seeded():
    chosen = select_tests(20, 15, 42, "some question")
    assert len(chosen) == 15 and chosen == sorted(set(chosen))
    assert chosen == select_tests(20, 15, 42, "some question")
    # pinned: sha256-ranked, so the same on every machine and Python version
    assert [i for i in range(20) if i not in chosen] == [6, 10, 14, 15, 18]
    assert select_tests(20, 15, 7, "some question") != chosen
    assert select_tests(5, 15, 42, "q") == [0, 1, 2, 3, 4]
    assert select_tests(20, None, 42, "q") == list(range(20))


def test_sample_loads_in_the_i3_layout():
    env = load_environment(source="sample")
    ds = env.get_dataset()
    assert len(ds) == len(SAMPLE_ROWS) == 12
    for row, raw in zip(ds, SAMPLE_ROWS, strict=True):
        (msg,) = row["prompt"]
        assert msg["role"] == "user"
        assert msg["content"].startswith("Solve the programming task below in a Python")
        assert msg["content"].endswith(raw["question"])
        info = row["info"]
        tests = json.loads(info["tests"])
        total = len(json.loads(json.loads(raw["info"])["tests"])["inputs"])
        assert info["num_test_cases"] == len(tests["inputs"]) == min(15, total)
        assert "solutions" not in info  # never shown to anyone downstream
    assert max(r["info"]["num_test_cases"] for r in ds) == 15


def test_difficulty_filter_and_missing_column():
    env = load_environment(source="sample", min_solve_rate=0.8, max_solve_rate=0.9)
    rates = sorted(r["avg@8_qwen3_4b_instruct_2507"] for r in SAMPLE_ROWS)
    assert len(env.get_dataset()) == sum(0.8 <= r <= 0.9 for r in rates)
    rows = [{"question": r["question"], "info": r["info"]} for r in SAMPLE_ROWS[:2]]
    assert len(load_environment(source=rows).get_dataset()) == 2  # full range: no filter
    with pytest.raises(vf.ConfigError, match="has no column 'avg@8_qwen3_4b_instruct_2507'"):
        load_environment(source=rows, min_solve_rate=0.1)
    with pytest.raises(vf.ConfigError, match="min_solve_rate <= max_solve_rate"):
        load_environment(source=rows, min_solve_rate=0.9, max_solve_rate=0.1)
    with pytest.raises(vf.ConfigError, match="no row of .* is left"):
        load_environment(source="sample", min_solve_rate=0.999, max_solve_rate=0.9995)


@pytest.mark.parametrize(
    ("info", "message"),
    [
        ("{not json", "not valid JSON"),
        (json.dumps({"source": "x"}), "'tests' field"),
        (json.dumps({"tests": "[1, 2"}), "not valid JSON"),
        (
            json.dumps({"tests": json.dumps({"inputs": ["1"], "outputs": []})}),
            "1 test inputs but 0",
        ),
        (json.dumps({"tests": json.dumps({"inputs": [], "outputs": []})}), "no test cases"),
        (json.dumps({"tests": json.dumps({"inputs": "1", "outputs": "1"})}), "lists"),
        (
            json.dumps({"tests": json.dumps({"inputs": [1], "outputs": [1], "fn_name": 3})}),
            "fn_name",
        ),
    ],
)
def test_broken_rows_give_clear_errors(info, message):
    with pytest.raises(vf.ConfigError, match=message):
        process_row({"question": "q", "info": info}, 7, 15, 42, 10.0)
    with pytest.raises(vf.ConfigError, match="row 0"):
        load_environment(source=[{"question": "q", "info": info}])


def test_missing_columns_are_named():
    with pytest.raises(vf.ConfigError, match="info"):
        load_environment(source=[{"question": "q"}])


# -- grading in sandboxes ---------------------------------------------------------------------
# The sandbox tests need the local bwrap provider (`bwrap_provider`: they fail, not skip,
# where it cannot run). The vf-eval tests use whatever `default_provider()` picks.


async def grade(env, states):
    await asyncio.gather(*(env.rubric.score_rollout(s) for s in states))
    return states


@pytest.fixture
async def provider():
    async with bwrap_provider() as p:
        yield p


async def test_right_and_wrong_solutions(provider):
    env = load_environment(source="sample", timeout_per_test=2, provider=provider, pool_size=4)
    rows = list(env.get_dataset())
    states = []
    for row in rows:
        raw = row["prompt"][0]["content"].split("\n\n", 1)[1]
        sol = SOLUTIONS[raw]
        states.append(row_state(row, fence(sol["correct"])))
        states.append(row_state(row, "<think>hmm</think>" + fence(sol["wrong"], "py")))
    await grade(env, states)
    for i, s in enumerate(states):
        detail = (i // 2, s.get("error"), s.get("test_results"))
        assert s.get("error") is None, detail
        assert s["reward"] == (1.0 if i % 2 == 0 else 0.0), detail
        assert s["metrics"]["num_test_cases"] == s["info"]["num_test_cases"]
        if i % 2 == 0:
            assert s["metrics"]["pass_rate"] == 1.0
    # partial: the exponential grid solution passes the small tests, then times out
    grid = states[2 * 10 + 1]["test_results"]
    assert [r["status"] for r in grid][:4] == ["passed"] * 4 and "timeout" in {
        r["status"] for r in grid
    }
    assert 0 < states[2 * 10 + 1]["metrics"]["pass_rate"] < 1
    await env.teardown()


async def test_bad_programs_and_malformed_output(provider):
    env = load_environment(source="sample", timeout_per_test=3, provider=provider, pool_size=2)
    row = next(iter(env.get_dataset()))  # a + b
    cases = {
        "syntax": (fence("a, b = map(int, input().split()\nprint(a + b)\n"), "runtime_error"),
        "no_fence": ("a, b = map(int, input().split())\nprint(a + b)", "no_code"),
        "empty_fence": ("```python\n```", "no_code"),
        "unclosed_think": ("<think>" + fence("print(3)"), "no_code"),
        "crash": (fence("raise ValueError('boom')\n"), "runtime_error"),
        "exit_1_right_output": (
            fence("import sys\na, b = map(int, input().split())\nprint(a + b)\nsys.exit(1)\n"),
            "runtime_error",
        ),
        # killed by the memory cgroup (or slowed into the timeout while it reclaims)
        "memory_bomb": (fence("x = bytearray(4 << 30)\n"), ("runtime_error", "timeout")),
        "unknown_name": (fence("print(numpy.add(1, 2))\n"), "runtime_error"),
        "output_flood": (
            fence("while True: print('y' * 1000)\n"),
            ("wrong_answer", "runtime_error"),
        ),
    }
    # no imports: the prelude supplies the names it mentions (a future import stays first)
    uses_prelude = fence(
        "from __future__ import annotations\n"
        "def total(xs: List[int]) -> int:\n    return reduce(operator.add, xs, 0)\n"
        "d = defaultdict(int)\nd[0] = total(list(map(int, sys.stdin.read().split())))\n"
        "print(d[0])\n"
    )
    states = [row_state(row, text) for text, _ in cases.values()]
    ok = row_state(row, uses_prelude)
    await grade(env, [*states, ok])
    assert ok["reward"] == 1.0, ok["test_results"]
    for (name, (_, status)), s in zip(cases.items(), states, strict=True):
        assert s.get("error") is None and s["reward"] == 0.0, name
        expected = (status,) if isinstance(status, str) else status
        assert s["test_results"][0]["status"] in expected, (name, s["test_results"][0])
    await env.teardown()


CONTAINED = r"""
import os, socket
found = []
for path in ["/etc/shadow", "/root", "/work", HOST_FILE]:
    try:
        if os.path.isdir(path):
            os.listdir(path)
        else:
            open(path).read()
        found.append("LEAK:" + path)
    except OSError:
        pass
for family, addr in [(socket.AF_INET, ("127.0.0.1", 22)), (socket.AF_INET, ("1.1.1.1", 53))]:
    try:
        s = socket.socket(family, socket.SOCK_STREAM)
        s.settimeout(1)
        s.connect(addr)
        found.append("NET:" + str(addr))
    except OSError:
        pass
extra = sorted(set(os.listdir(".")) - {"solution.py", "__pycache__"})
if extra:
    found.append("FILES:" + ",".join(extra))
a, b = map(int, input().split())
print(a + b if not found else " ".join(found))
"""


async def test_hidden_files_and_network_are_out_of_reach(provider):
    env = load_environment(source="sample", timeout_per_test=5, provider=provider, pool_size=1)
    row = next(iter(env.get_dataset()))
    code = CONTAINED.replace("HOST_FILE", repr(str(SAMPLE)))
    (s,) = await grade(env, [row_state(row, fence(code))])
    # the test files and expected outputs never enter the sandbox; host files and the
    # network are unreachable, so the program answers normally
    assert s["reward"] == 1.0, s["test_results"]
    await env.teardown()


async def test_infinite_loop_is_cut_at_the_timeout_without_stalling_others(provider):
    timeout = 4.0
    env = load_environment(
        source="sample", timeout_per_test=timeout, provider=provider, pool_size=3
    )
    rows = list(env.get_dataset())
    primes = next(r for r in rows if r["info"]["num_test_cases"] == 15)
    loop = row_state(primes, fence("while True:\n    pass\n"))
    add = rows[0]  # a + b, 5 tests
    right = row_state(
        add, fence(SOLUTIONS[add["prompt"][0]["content"].split("\n\n", 1)[1]]["correct"])
    )
    t0 = time.perf_counter()
    done_at = {}

    async def timed(name, s):
        await env.rubric.score_rollout(s)
        done_at[name] = time.perf_counter() - t0

    await asyncio.gather(timed("loop", loop), timed("right", right))
    assert loop["reward"] == 0.0 and loop.get("error") is None
    statuses = [r["status"] for r in loop["test_results"]]
    assert statuses[0] == "timeout" and set(statuses[1:]) == {"skipped"} and len(statuses) == 15
    assert timeout <= done_at["loop"] < timeout + 4.0  # one timeout, not fifteen
    # the other rollout is graded meanwhile, not after the loop
    assert right["reward"] == 1.0 and done_at["right"] < timeout
    await env.teardown()


class BrokenProvider(Provider):
    name = "broken"

    def __init__(self):
        self.calls = 0

    async def create(self, spec=None):
        self.calls += 1
        raise SandboxCreationError("injected: the sandbox service is down")


async def test_sandbox_that_cannot_start_is_an_infra_error_not_a_zero():
    broken = BrokenProvider()
    env = load_environment(source="sample", provider=broken, pool_size=0, sandbox_retries=2)
    row = next(iter(env.get_dataset()))
    sol = SOLUTIONS[row["prompt"][0]["content"].split("\n\n", 1)[1]]
    (s,) = await grade(env, [row_state(row, fence(sol["wrong"]))])
    assert s["error"]["infra"] is True and "sandbox" in s["error"]["message"]
    assert math.isnan(s["reward"]) and broken.calls == 3
    await env.teardown()


# -- vf-eval end to end -----------------------------------------------------------------------
def test_vf_eval_against_the_scripted_server(tmp_path):
    by_prompt = {}
    for i, r in enumerate(SAMPLE_ROWS[:4]):
        sol = SOLUTIONS[r["question"]]
        # problems 0 and 2 answered right, 1 wrong, 3 without a code block
        by_prompt[r["question"]] = (
            fence(sol["correct"]) if i in (0, 2) else fence(sol["wrong"]) if i == 1 else "no code"
        )

    def responder(body):
        return by_prompt[last_text(body).split("\n\n", 1)[1]]

    with ScriptedServer(responder) as srv:
        rows, meta = run_vf_eval(
            tmp_path, "i3-code", srv.base_url, "-n", 4, "-r", 2,
            "--env-args", json.dumps({"source": "sample", "timeout_per_test": 3, "pool_size": 2}),
        )  # fmt: skip
    assert len(rows) == 8
    rewards = {}
    for row in rows:
        assert row.get("error") is None, row["error"]
        rewards.setdefault(row["example_id"], set()).add(row["reward"])
    assert rewards == {0: {1.0}, 1: {0.0}, 2: {1.0}, 3: {0.0}}
    assert meta["env_id"] == "i3-code"
