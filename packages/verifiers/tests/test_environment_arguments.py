"""`vf.dataset_from_arguments` and `vf.judge_from_arguments` (issue 29 item 5): the rows i3-code
and the judged environments, and the judge deepdive and hle, each built from their own
``source``/``dataset_*`` and ``judge_*`` arguments, read once; the environments' suites check
what they get end to end (the judged ones through a local hub with two configs and splits)."""

from __future__ import annotations

import asyncio
import json

import pytest

import verifiers as vf


def test_rows_named_by_source_with_the_sample_and_required_columns(tmp_path):
    sample = tmp_path / "sample.jsonl"
    sample.write_text(json.dumps({"question": "q1", "answer": "1"}) + "\n")
    named = {"source": "sample", "dataset_name": "owner/data", "dataset_subset": "math"}
    assert vf.dataset_from_arguments(named, sample=sample)["question"] == ["q1"]
    rows = [{"question": "q2", "answer": "2"}]
    given = {"source": rows, "dataset_name": "owner/data"}  # no subset or split: none, "train"
    assert vf.dataset_from_arguments(given, sample=sample)["answer"] == ["2"]
    with pytest.raises(vf.ConfigError, match="info"):
        vf.dataset_from_arguments(given, sample=sample, required_columns=["question", "info"])


def build(arguments, **extra):
    rubric = vf.judge_from_arguments(
        arguments, vf.Parser(), endpoint={"judge_base_url": "http://127.0.0.1:9/v1"}, **extra
    )
    asyncio.run(rubric.teardown())
    return rubric


def test_named_arguments_reach_the_judge_and_none_keeps_its_defaults():
    given = build(
        {
            "judge_model": "judge",
            "judge_timeout": 12.0,
            "judge_max_retries": 1,
            "judge_max_concurrent": 3,
            "judge_sampling_args": {"temperature": 0.5},
            "dataset_name": "not a judge argument",
        }
    )
    assert given.judge_model == "judge" and given.judge_sampling_args == {"temperature": 0.5}
    assert (given.judge_timeout, given.judge_max_retries, given.judge_max_concurrent) == (
        12.0,
        1,
        3,
    )
    assert str(given.judge_client.base_url).startswith("http://127.0.0.1:9/v1")
    unset = build({"judge_model": "judge", "judge_timeout": None})
    plain = build({"judge_model": "judge"})
    assert unset.judge_timeout == plain.judge_timeout != 12.0
    assert unset.judge_max_concurrent == plain.judge_max_concurrent != 3
    assert unset.judge_prompt == plain.judge_prompt


def test_sampling_args_and_prompt_given_by_the_environment_win():
    """hle adds a response format to the caller's sampling arguments and resolves its own
    template; those are what the judge gets."""
    rubric = build(
        {"judge_model": "j", "judge_sampling_args": {"temperature": 0.5}},
        sampling_args={"temperature": 0.5, "response_format": {"type": "json_object"}},
        prompt="Is {response} {answer}?",
    )
    assert rubric.judge_sampling_args["response_format"] == {"type": "json_object"}
    assert rubric.judge_prompt == "Is {response} {answer}?"
