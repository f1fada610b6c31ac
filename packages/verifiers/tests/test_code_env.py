"""CodeEnv: last fenced block, stdin/stdout and function-call tests, tolerant comparison,
per-test timeouts, pass-rate and all-pass rewards."""

import json

import pytest
from datasets import Dataset

import verifiers as vf
from verifiers.envs.code_env import (
    CodeEnv,
    extract_code,
    outputs_match,
    parse_tests,
    values_match,
)
from verifiers.sandbox.base import Provider, SandboxSpec
from verifiers.sandbox.bwrap import BwrapProvider
from verifiers.testing import ScriptedServer
from verifiers.testing.responders import last_text


def test_extract_last_fenced_block():
    text = "first\n```python\nprint(1)\n```\nthen\n```py\nprint(2)\n```\n```text\nnot code\n```"
    assert extract_code(text) == "print(2)\n"
    assert extract_code("```\nx = 1\n```") == "x = 1\n"
    assert extract_code("no code here") is None


def test_tolerant_comparison():
    assert outputs_match("1 2 3\n\n", "1  2 3")
    assert outputs_match("1\n2\n", "1 2")
    assert outputs_match("0.3333333333", "0.333333333")
    assert not outputs_match("1 2", "1 2 3")
    assert not outputs_match("0.34", "0.33")
    assert values_match((1, [2.0000000001]), [1, [2.0]])
    assert not values_match((1, [2.0]), [1, [2]])  # an integer answer is not a float
    assert values_match(5, [5])  # APPS wraps outputs in a list
    assert not values_match(True, 1) and not values_match([1, 2], [2, 1])


def test_parse_test_formats():
    apps = {"inputs": [[1, 2]], "outputs": [3], "fn_name": "add"}
    assert parse_tests(json.dumps(apps))[0].fn_name == "add"
    io = parse_tests([{"input": "1\n", "output": "2\n"}])
    assert io[0].fn_name is None and io[0].input == "1\n"


REASON = BwrapProvider.unavailable_reason()

PROGRAMS = {
    "echo_sum": "```python\nimport sys\nprint(sum(map(int, sys.stdin.read().split())))\n```",
    "wrong_sum": "Here:\n```python\nprint(0)\n```",
    "float_div": "```python\na, b = map(int, input().split())\nprint(a / b)\n```",
    "loop": "```python\nimport sys\nn = int(sys.stdin.read())\nwhile n == 2: pass\nprint(n)\n```",
    "solution_class": (
        "```python\nclass Solution:\n    def twoSum(self, nums, target):\n"
        "        seen = {}\n        for i, x in enumerate(nums):\n"
        "            if target - x in seen: return [seen[target - x], i]\n"
        "            seen[x] = i\n```"
    ),
    "plain_fn": "```python\ndef add(a, b):\n    print('noise')\n    return (a + b,)\n```",
    "crash": "```python\nraise SystemExit(3)\n```",
    "none": "I cannot solve this.",
}

ROWS = [
    ("echo_sum", [{"input": "1 2\n", "output": "3"}, {"input": "5 5", "output": "10\n"}]),
    ("wrong_sum", [{"input": "1 2", "output": "3"}, {"input": "0 0", "output": "0"}]),
    ("float_div", [{"input": "1 3", "output": "0.333333333"}]),
    ("loop", [{"input": "1", "output": "1"}, {"input": "2", "output": "2"}, {"input": "3", "output": "3"}]),
    ("solution_class", {"fn_name": "twoSum", "inputs": [[[2, 7, 11], 9], "[3, 2, 4]\n6"], "outputs": [[0, 1], [[1, 2]]]}),
    ("plain_fn", {"fn_name": "add", "inputs": [[1, 2], {"a": 2, "b": 2}], "outputs": [[3], [5]]}),
    ("crash", [{"input": "", "output": ""}]),
    ("none", [{"input": "", "output": ""}]),
]  # fmt: skip
EXPECTED = {  # (passed, pass_rate)
    "echo_sum": (1.0, 1.0),
    "wrong_sum": (0.0, 0.5),
    "float_div": (1.0, 1.0),
    "loop": (0.0, 2 / 3),
    "solution_class": (1.0, 1.0),
    "plain_fn": (0.0, 0.5),
    "crash": (0.0, 0.0),
    "none": (0.0, 0.0),
}


@pytest.mark.skipif(REASON is not None, reason=f"bwrap provider: {REASON}")
async def test_code_env_grades_programs_in_sandboxes():
    ds = Dataset.from_list(
        [{"question": key, "answer": "", "info": {"tests": json.dumps(t)}} for key, t in ROWS]
    )
    provider = BwrapProvider()
    env = CodeEnv(
        dataset=ds,
        timeout_per_test=1.0,
        pass_rate_weight=0.0,
        provider=provider,
        spec=SandboxSpec(memory=256 * 2**20, disk=16 * 2**20),
        pool_size=2,
    )
    with ScriptedServer(lambda body: PROGRAMS[last_text(body)]) as srv:
        client = vf.OpenAIClient(srv.base_url, api_key="x")
        try:
            out = await env.evaluate(
                client, "m", num_examples=len(ROWS), state_columns=["test_results"]
            )
        finally:
            await client.aclose()
    for (key, _), o in zip(ROWS, out["outputs"], strict=True):
        got = (o["metrics"]["passed"], round(o["metrics"]["pass_rate"], 4))
        assert got == (EXPECTED[key][0], round(EXPECTED[key][1], 4)), (key, o.get("test_results"))
        assert o["reward"] == EXPECTED[key][0]
    statuses = {r["status"] for o in out["outputs"] for r in o["test_results"]}
    assert {"timeout", "runtime_error", "no_code", "wrong_answer", "passed"} <= statuses
    assert provider.live == 0
    await env.teardown()


def test_call_args_accept_python_literals():
    from verifiers.envs.code_env import _call_args

    assert _call_args("[1, 2]\n'a'\nTrue\nNone") == [[1, 2], "a", True, None]
    assert _call_args('{"a": 1}') == [{"a": 1}]
    assert _call_args("not a literal (") == ["not a literal ("]


class FlakyProvider(Provider):
    """Fails the first `fail` creations, then delegates to a real provider (None: always)."""

    def __init__(self, inner, fail):
        self.inner, self.fail, self.calls = inner, fail, 0

    async def create(self, spec=None):
        from verifiers.sandbox.base import SandboxCreationError

        self.calls += 1
        if self.inner is None or self.calls <= self.fail:
            raise SandboxCreationError(f"injected failure {self.calls}")
        return await self.inner.create(spec)


async def _grade(env, program, tests):
    state = {
        "completion": [{"role": "assistant", "content": program}],
        "info": {"tests": json.dumps(tests)},
        "answer": "",
    }
    await env.rubric.score_rollout(state)
    return state


@pytest.mark.skipif(REASON is not None, reason=f"bwrap provider: {REASON}")
async def test_sandbox_failures_retry_then_mask_and_kills_are_the_solutions_fault():
    tests = [{"input": "1 2", "output": "3"}, {"input": "2 2", "output": "4"}]
    good = "```python\nprint(sum(map(int, input().split())))\n```"
    spec = SandboxSpec(memory=256 * 2**20, disk=16 * 2**20)
    bwrap = BwrapProvider()

    def one_row(provider, **settings):
        dataset = Dataset.from_list([{"question": "q", "answer": ""}])
        return CodeEnv(dataset=dataset, provider=provider, spec=spec, pool_size=0, **settings)

    try:
        # two creation failures, then a real sandbox: graded normally
        flaky = FlakyProvider(bwrap, fail=2)
        env = one_row(flaky, sandbox_retries=2)
        state = await _grade(env, good, tests)
        assert state["reward"] == 1.0 and state.get("error") is None and flaky.calls == 3
        await env.teardown()
        # a provider that never starts: an infra error (masked), reward NaN, never a fake 0
        broken = FlakyProvider(None, fail=0)
        env = one_row(broken, sandbox_retries=1)
        state = await _grade(env, good, tests)
        assert state["error"]["infra"] is True and broken.calls == 2
        assert state["reward"] != state["reward"]  # NaN
        await env.teardown()
        # a solution that kills its sandbox (agent included) fails that test, not masked
        env = one_row(bwrap, stop_after_timeout=True, timeout_per_test=1.0)
        killer = "```python\nimport os, signal\nif input() == '2 2': os.kill(-1, signal.SIGKILL)\nprint(3)\n```"
        state = await _grade(env, killer, tests)
        assert state.get("error") is None and state["reward"] == 0.0
        assert [r["status"] for r in state["test_results"]] == ["passed", "sandbox_killed"]
        # a timeout skips the remaining tests (they count as failed)
        loop = "```python\nwhile True: pass\n```"
        state = await _grade(env, loop, tests)
        assert [r["status"] for r in state["test_results"]] == ["timeout", "skipped"]
        await env.teardown()
    finally:
        await bwrap.close()
    assert bwrap.live == 0
