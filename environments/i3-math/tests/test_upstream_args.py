"""i3-math takes upstream's load_environment arguments (prime-environments i3_math, 2025-12)
with upstream's meaning and defaults; each one changes what is loaded or how it is judged."""

import inspect

import i3_math
import pytest
from i3_math import load_environment

import verifiers as vf
from verifiers.testing import JUDGED_TASK_CHECKS

# name -> upstream default
UPSTREAM = {
    "dataset_name": "PrimeIntellect/INTELLECT-3-RL",
    "dataset_subset": "math",
    "dataset_split": "train",
    "dataset_shuffle": False,
    "difficulty_key": "avg@8_qwen3_4b_thinking_2507",
    "min_avg_reward": 0.0,
    "max_avg_reward": 1.0,
    "judge_model": None,
    "judge_base_url": None,
    "judge_sampling_args": {},
    "judge_api_key_var": None,
}


def problems(env: vf.Environment) -> list[str]:
    return [q.split("\n\n", 1)[1] for q in env.dataset["question"]]


def test_every_upstream_argument_has_upstream_default():
    params = inspect.signature(load_environment).parameters
    ours = {k: params[k].default for k in UPSTREAM}
    ours["judge_sampling_args"] = ours["judge_sampling_args"] or {}  # None means {}
    assert ours == UPSTREAM
    env = load_environment(source="sample", **UPSTREAM)
    assert len(env.dataset) == 17  # the defaults filter nothing


def test_pass_rate_window_and_difficulty_key_change_the_rows():
    all_rows = problems(load_environment(source="sample"))
    hard = problems(load_environment(source="sample", min_avg_reward=0.0, max_avg_reward=0.5))
    assert 0 < len(hard) < len(all_rows) and set(hard) < set(all_rows)
    other_key = problems(
        load_environment(
            source="sample",
            difficulty_key="avg@8_qwen3_4b_instruct_2507",
            max_avg_reward=0.5,
        )
    )
    assert other_key != hard  # the window is read from the named column


@pytest.mark.parametrize("check", JUDGED_TASK_CHECKS, ids=lambda check: check.__name__)
async def test_shared_judged_task_check(check, tmp_path, monkeypatch):
    """The rest of upstream's arguments, and the published prompts loaded at run time, as every
    `vf.JudgedBoxedTask` environment takes them (`verifiers.testing.judged_tasks`)."""
    await check(i3_math, tmp_path, monkeypatch)
