"""What a process pays at start-up: `openai` (about a second of CPU) is imported only where an
SDK object is used, and `datasets` (seconds) only when an environment loads. Each check runs
in a fresh interpreter, where `sys.modules` shows what was imported."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx
import openai

from verifiers.openai_sdk import is_openai_client
from verifiers.rubrics.scores import is_infra_exception


def _imported(code: str) -> dict[str, bool]:
    """Run `code` in a fresh interpreter; which of openai and datasets it imported."""
    probe = (
        f"{code}\nimport json, sys\n"
        "print(json.dumps({m: m in sys.modules for m in ('openai', 'datasets')}))"
    )
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.splitlines()[-1])


def test_a_rollout_with_our_client_never_imports_openai():
    code = (
        "from datasets import Dataset\n"
        "import verifiers as vf\n"
        "from verifiers.testing import ScriptedServer\n"
        "rows = [{'question': f'{i} + 1', 'answer': str(i + 1)} for i in range(3)]\n"
        "env = vf.SingleTurnEnv(dataset=Dataset.from_list(rows),\n"
        "    rubric=vf.Rubric(funcs=[lambda completion, answer: 1.0]))\n"
        "with ScriptedServer(lambda body: 'ok') as srv:\n"
        "    out = env.evaluate_sync(srv.base_url, 'm', num_examples=3)\n"
        "assert out.reward == [1.0] * 3, out.reward\n"
    )
    assert _imported(code) == {"openai": False, "datasets": True}


def test_a_failing_reward_function_never_imports_openai():
    code = (
        "from verifiers.rubrics.scores import is_infra_exception\n"
        "assert not is_infra_exception(ValueError('bad answer'))\n"
    )
    assert _imported(code) == {"openai": False, "datasets": False}


def test_a_refused_vf_eval_command_line_imports_neither():
    code = (
        "from verifiers.cli.eval import main\nassert main(['some-env', '-a', '{not json']) == 2\n"
    )
    assert _imported(code) == {"openai": False, "datasets": False}


def test_openai_clients_are_still_recognised():
    assert is_openai_client(openai.AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key="x"))
    assert is_openai_client(openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key="x"))
    assert not is_openai_client("http://127.0.0.1:9/v1")
    assert not is_openai_client(object())
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    assert is_infra_exception(openai.APIConnectionError(request=request))
