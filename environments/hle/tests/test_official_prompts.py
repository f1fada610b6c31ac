"""system_prompt="official" / judge_prompt="official": HLE's published prompts at run time.

A loopback HTTP server stands in for the HLE repository: ``hle_eval/run_model_predictions.py``
and ``hle_eval/run_judge_results.py`` in the published layout (the constants' names and
placeholders), with placeholder wording written for this test. The judge is a scripted
OpenAI-compatible server returning the structured verdict.
"""

from __future__ import annotations

import dataclasses
import json

import hle
import pytest

import verifiers as vf
from verifiers.testing import ScriptedServer, published_files
from verifiers.testing.responders import last_text

PREDICTIONS = """\
import os
from openai import AsyncOpenAI

SYSTEM_EXACT_ANSWER = "PLACEHOLDER EXACT FORMAT:\\nExplanation: {your explanation}\\nExact Answer: {your answer}"

SYSTEM_MC = "PLACEHOLDER CHOICE FORMAT:\\nExplanation: {your explanation}\\nAnswer: {your choice}"

client = AsyncOpenAI(api_key=os.environ["NEVER_EXECUTED"])
"""

JUDGING = '''\
JUDGE_PROMPT = """PLACEHOLDER JUDGE TEXT.

[question]: {question}

[response]: {response}

[correct_answer]: {correct_answer}
"""
'''


@pytest.fixture
def published(tmp_path, monkeypatch):
    folder = "centerforaisafety/hle/pinned/hle_eval"
    files = {f"{folder}/run_model_predictions.py": PREDICTIONS}
    files[f"{folder}/run_judge_results.py"] = JUDGING
    with published_files(tmp_path, monkeypatch, files) as site:
        base = f"{site}/{folder}/"

        def moved(src: vf.PromptSource) -> vf.PromptSource:
            return dataclasses.replace(src, url=base + src.url.rsplit("/", 1)[1])

        monkeypatch.setattr(
            hle,
            "OFFICIAL_SYSTEM_PROMPTS",
            {k: moved(v) for k, v in hle.OFFICIAL_SYSTEM_PROMPTS.items()},
        )
        monkeypatch.setattr(hle, "OFFICIAL_JUDGE_PROMPT", moved(hle.OFFICIAL_JUDGE_PROMPT))
        yield base


def test_the_official_sources_are_hles_published_scripts():
    for kind, name in (("exactMatch", "SYSTEM_EXACT_ANSWER"), ("multipleChoice", "SYSTEM_MC")):
        src = hle.OFFICIAL_SYSTEM_PROMPTS[kind]
        assert src.url.startswith("https://raw.githubusercontent.com/centerforaisafety/hle/")
        assert src.url.endswith("/hle_eval/run_model_predictions.py") and src.name == name
    judge = hle.OFFICIAL_JUDGE_PROMPT
    assert judge.url.endswith("/hle_eval/run_judge_results.py") and judge.name == "JUDGE_PROMPT"
    assert dict(judge.placeholders) == {"correct_answer": "answer"}


def test_official_system_prompts_follow_the_answer_type(published):
    env = hle.load_environment(source="sample", system_prompt="official")
    for row in env.dataset:
        system = row["prompt"][0]
        assert system["role"] == "system"
        kind = row["info"]["answer_type"]
        expected = "PLACEHOLDER EXACT" if kind == "exactMatch" else "PLACEHOLDER CHOICE"
        assert system["content"].startswith(expected), kind
        assert "{your answer}" in system["content"] or "{your choice}" in system["content"]
    # one published text for every row, named as a source
    src = {"url": published + "run_model_predictions.py", "name": "SYSTEM_MC"}
    one = hle.load_environment(source="sample", system_prompt=src)
    assert {r["prompt"][0]["content"] for r in one.dataset} == {
        "PLACEHOLDER CHOICE FORMAT:\nExplanation: {your explanation}\nAnswer: {your choice}"
    }


def verdict(body):
    text = last_text(body)
    assert text.startswith("PLACEHOLDER JUDGE TEXT."), text
    assert body.get("response_format", {}).get("type") == "json_schema"
    gold = text.split("[correct_answer]: ", 1)[1].strip()
    response = text.split("[response]: ", 1)[1].split("\n\n[correct_answer]", 1)[0]
    correct = "yes" if gold in response else "no"
    return json.dumps(
        {
            "extracted_final_answer": response,
            "reasoning": "compared",
            "correct": correct,
            "confidence": 90,
        }
    )


async def test_official_judge_prompt_grades_with_the_gold_answer_in_its_slot(published):
    with ScriptedServer(verdict) as srv:
        env = hle.load_environment(
            source="sample", judge_prompt="official", judge_base_url=srv.base_url
        )
        row = env.dataset[0]
        prompt = row["prompt"]
        state = {
            "prompt": prompt,
            "completion": [{"role": "assistant", "content": f"Answer: {row['answer']}"}],
            "answer": row["answer"],
            "info": row["info"],
            "task": "hle",
            "example_id": 0,
            "metrics": {},
            "error": None,
            "usage": {"input_tokens": 0, "output_tokens": 0},
            "input": {"prompt": prompt, "answer": row["answer"], "example_id": 0},
        }
        await env.rubric.score_rollout(state)
        assert state["error"] is None and state["reward"] == 1.0
        sent = last_text(srv.requests[-1])
        assert f"[correct_answer]: {row['answer']}" in sent
        await env.rubric.teardown()


def test_official_judge_prompt_needs_structured_output(published):
    with pytest.raises(vf.ConfigError, match="keep judge_structured_output=True"):
        hle.load_environment(
            source="sample", judge_prompt="official", judge_structured_output=False
        )


def test_unreachable_publication_is_a_config_error(tmp_path, monkeypatch):
    monkeypatch.setenv("VF_PROMPT_CACHE", str(tmp_path / "empty"))
    dead = {
        k: dataclasses.replace(v, url="http://127.0.0.1:9/hle_eval/run_model_predictions.py")
        for k, v in hle.OFFICIAL_SYSTEM_PROMPTS.items()
    }
    monkeypatch.setattr(hle, "OFFICIAL_SYSTEM_PROMPTS", dead)
    with pytest.raises(vf.ConfigError, match=r"allow network access, or pass the system message"):
        hle.load_environment(source="sample", system_prompt="official")


def test_defaults_stay_our_wording():
    env = hle.load_environment(source="sample")
    assert env.rubric.judge_prompt == hle.JUDGE_PROMPT
    systems = {r["prompt"][0]["content"] for r in env.dataset}
    assert systems <= set(hle.ANSWER_TYPES.values())
    with pytest.raises(vf.ConfigError, match=r"judge_prompt lacks the placeholders \{answer\}"):
        hle.load_environment(source="sample", judge_prompt="Is {response} right?")
