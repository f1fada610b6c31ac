"""verifier="judge" against a real local OpenAI-compatible judge, and the upstream
environment's instructions loaded at run time (instruction_prompt="official").

The published file is stood in for by a loopback HTTP server holding ``gpqa.py`` in the
upstream layout (an ``INSTRUCTION_PROMPT`` constant) with placeholder wording written here.
"""

from __future__ import annotations

import dataclasses
import math
import re

import gpqa
import pytest

import verifiers as vf
from verifiers import ConfigError
from verifiers.testing import ScriptedServer, published_files
from verifiers.testing.responders import last_text


def state_for(row: dict, completion: str) -> dict:
    return {
        "input": {"prompt": row["prompt"], "answer": row["answer"], "example_id": 0},
        "prompt": row["prompt"],
        "completion": [{"role": "assistant", "content": completion}],
        "answer": row["answer"],
        "info": row["info"],
        "task": "gpqa",
        "example_id": 0,
        "metrics": {},
        "error": None,
        "usage": {"input_tokens": 0, "output_tokens": 0},
    }


def judge_reply(body):
    """A judge that compares the response's boxed letter with the ground truth it was given."""
    text = last_text(body)
    truth = re.search(r"Ground truth answer:\n```\n(.*?)\n```", text, re.S).group(1)
    response = re.search(r"Response:\n```\n(.*?)\n```", text, re.S).group(1)
    if "mumble" in response:
        return "Hard to say; perhaps yes."  # not a verdict: a judge failure
    if "no box" in response:
        return "no, but yes in spirit"  # upstream's substring rule would score this 1
    return "yes" if f"\\boxed{{{truth}}}" in response else "no"


@pytest.fixture(scope="module")
def judge():
    with ScriptedServer(judge_reply) as srv:
        yield srv


async def test_judge_mode_grades_with_the_judge(judge):
    env = gpqa.load_environment(
        source="sample", verifier="judge", judge_model="local-judge", judge_base_url=judge.base_url
    )
    row = env.dataset[0]
    right, wrong = row["answer"], next(x for x in "ABCD" if x != row["answer"])
    cases = [
        (f"Thinking...\n\\boxed{{{right}}}", 1.0, 1.0),
        (f"<think>hmm</think>It must be \\boxed{{{wrong}}}", 0.0, 0.0),
        ("no box here, the option about nitrogen", 0.0, 0.0),  # strict: "no, ..." is a no
        (f"<think>still thinking about \\boxed{{{right}}}", 0.0, 0.0),  # cut off: not judged
    ]
    before = len(judge.requests)
    for completion, reward, letter in cases:
        state = state_for(row, completion)
        await env.rubric.score_rollout(state)
        assert state["error"] is None, completion
        assert state["reward"] == reward, completion
        assert state["metrics"]["correct_letter"] == letter, completion
    sent = [last_text(b) for b in judge.requests[before:]]
    assert len(sent) == 3  # the cut-off response was not sent
    assert all(f"Ground truth answer:\n```\n{right}\n```" in p for p in sent)
    assert all(row["prompt"][-1]["content"] in p for p in sent)  # question and options
    assert {b["model"] for b in judge.requests[before:]} == {"local-judge"}
    await env.rubric.teardown()


async def test_a_reply_that_is_no_verdict_is_an_infra_error(judge):
    env = gpqa.load_environment(source="sample", verifier="judge", judge_base_url=judge.base_url)
    state = state_for(env.dataset[0], "mumble \\boxed{A}")
    await env.rubric.score_rollout(state)
    assert math.isnan(state["reward"]) and state["error"]["infra"] is True
    assert "neither yes nor no" in state["error"]["message"]
    await env.rubric.teardown()


def test_parse_judge_verdict():
    assert gpqa.parse_judge_verdict("Yes.") == 1.0
    assert gpqa.parse_judge_verdict("<think>no?</think> yes") == 1.0
    assert gpqa.parse_judge_verdict("NO") == 0.0
    for reply in ("", "yesno", "I think yes", "maybe"):
        with pytest.raises(vf.JudgeError):
            gpqa.parse_judge_verdict(reply)


def test_judge_defaults_follow_upstream(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    env = gpqa.load_environment(source="sample", verifier="judge")
    assert env.rubric.judge_model == "gpt-4.1-nano"
    assert env.rubric.judge_prompt == vf.DEFAULT_JUDGE_PROMPT
    assert env.rubric.judge_client.api_key == "sk-test"  # upstream's default client
    keyless = gpqa.load_environment(
        source="sample", verifier="judge", judge_base_url="http://127.0.0.1:9/v1"
    )
    assert keyless.rubric.judge_client.api_key == "EMPTY"
    with pytest.raises(ConfigError, match="need verifier='judge'"):
        gpqa.load_environment(source="sample", judge_model="other")


# -- instruction_prompt="official" -------------------------------------------------------------
UPSTREAM_FILE = """\
import verifiers as vf

INSTRUCTION_PROMPT = "PLACEHOLDER: box the letter."

def load_environment(**kwargs):
    raise RuntimeError("never executed")
"""


@pytest.fixture
def published(tmp_path, monkeypatch):
    path = "environments/gpqa/gpqa.py"
    with published_files(tmp_path, monkeypatch, {path: UPSTREAM_FILE}) as site:
        url = f"{site}/{path}"
        moved = [dataclasses.replace(s, url=url) for s in gpqa.OFFICIAL_INSTRUCTIONS["boxed"]]
        monkeypatch.setitem(gpqa.OFFICIAL_INSTRUCTIONS, "boxed", moved)
        yield url


def test_official_sources_are_the_upstream_environment_files():
    (boxed,) = gpqa.OFFICIAL_INSTRUCTIONS["boxed"]
    assert boxed.url.startswith(
        "https://raw.githubusercontent.com/PrimeIntellect-ai/research-environments/"
    )
    assert boxed.url.endswith("/environments/gpqa/gpqa.py") and boxed.name == "INSTRUCTION_PROMPT"
    (line,) = gpqa.OFFICIAL_INSTRUCTIONS["answer_line"]
    assert line.name == "MCQ_ANSWER_PROMPT"
    assert gpqa.OFFICIAL_JUDGE_PROMPT.name == "DEFAULT_JUDGE_PROMPT"


def test_official_instruction_is_loaded(published):
    env = gpqa.load_environment(source="sample", instruction_prompt="official")
    assert env.dataset["question"][0].startswith("PLACEHOLDER: box the letter.\n\nQuestion: ")
    judged = gpqa.load_environment(source="sample", verifier="judge", instruction_prompt="official")
    assert judged.dataset["question"][0].startswith("PLACEHOLDER: box the letter.")


def test_unreachable_official_instruction_is_a_config_error(tmp_path, monkeypatch):
    monkeypatch.setenv("VF_PROMPT_CACHE", str(tmp_path / "empty"))
    dead = [
        dataclasses.replace(s, url="http://127.0.0.1:9/gpqa.py")
        for s in gpqa.OFFICIAL_INSTRUCTIONS["boxed"]
    ]
    monkeypatch.setitem(gpqa.OFFICIAL_INSTRUCTIONS, "boxed", dead)
    with pytest.raises(ConfigError, match="pass the template text as instruction_prompt"):
        gpqa.load_environment(source="sample", instruction_prompt="official")
