"""The documentation's code runs: every tutorial example against a real (scripted) model
server, and the site builds in strict mode (broken links and references fail)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import verifiers as vf
from verifiers.testing import Reply, ScriptedServer, ScriptResponder
from verifiers.testing.responders import last_text

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "docs" / "examples"


@pytest.fixture(autouse=True)
def _examples_importable(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))


def _evaluate(env_id: str, responder, **kw):
    env = vf.load_environment(env_id, **kw.pop("env_args", {}))
    with ScriptedServer(responder) as srv:
        return env.evaluate_sync(srv.base_url, "scripted", **kw)


def test_single_turn_tutorial():
    def answer(body):  # right for even first operands, wrong for odd ones
        a, b = map(int, re.findall(r"\d+", last_text(body))[:2])
        return f"\\boxed{{{a + b if a % 2 == 0 else a + b + 1}}}"

    out = _evaluate("single_turn", answer, env_args={"num_examples": 6})
    assert sorted(out.reward) == [0.0] * 3 + [1.0] * 3


def test_guess_game_tutorial():
    def bisect(body):
        lo, hi = 1, 100
        guess = 50
        for m in body["messages"]:
            if m["role"] == "assistant":
                guess = int(m["content"])
            if m["role"] == "user" and m["content"] in ("higher", "lower"):
                lo, hi = (guess + 1, hi) if m["content"] == "higher" else (lo, guess - 1)
        return str((lo + hi) // 2)

    out = _evaluate("guess_game", bisect)
    assert out.reward == [1.0, 1.0, 1.0]
    assert all(1 <= t <= 7 for t in out.metrics["turns"])


def test_tool_agent_tutorial():
    def agent(body):
        msgs = body["messages"]
        tool_results = [m["content"] for m in msgs if m["role"] == "tool"]
        items = re.findall(r"(apples|pears|plums)", msgs[1]["content"] if len(msgs) > 1 else "")
        if not tool_results:
            return Reply(tool_calls=[{"name": "stock", "arguments": {"item": i}} for i in items])
        if len(tool_results) == 2:
            a, b = (int(x) for x in tool_results)
            return Reply(tool_calls=[{"name": "add", "arguments": {"a": a, "b": b}}])
        return f"The total is {tool_results[-1]}"

    out = _evaluate("tool_agent", agent)
    assert out.reward == [1.0, 1.0]
    assert out.metrics["tool_calls"] == [3.0, 3.0]


def test_code_sandbox_tutorial():
    programs = {
        "sum": "```python\na, b = map(int, input().split())\nprint(a + b)\n```",
        "double": "```python\ndef double(x):\n    return 2 * x\n```",
    }
    responder = ScriptResponder(
        [("print their sum", programs["sum"]), ("double", programs["double"])]
    )
    out = _evaluate("code_sandbox", responder)
    assert out.reward == [1.0, 1.0]

    wrong = ScriptResponder([("", "```python\nprint(0)\n```")])
    assert _evaluate("code_sandbox", wrong).reward == [0.0, 0.0]


def test_classic_environment_runs_unmodified():
    responder = ScriptResponder(
        [
            ("6 \\* 7", "<think>\nsix sevens\n</think>\n<answer>\n42\n</answer>"),
            ("10 - 3", "<think>\nhm\n</think>\n<answer>\n8\n</answer>"),
        ]
    )
    out = _evaluate("classic_env", responder)
    correct = out.metrics["correct_answer_reward_func"]
    assert correct == [1.0, 0.0]


def test_site_builds_strictly(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "site" / "index.html").exists()
    assert (tmp_path / "site" / "reference" / "openapi.json").exists()
