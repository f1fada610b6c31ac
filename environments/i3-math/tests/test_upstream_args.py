"""i3-math takes upstream's load_environment arguments (prime-environments i3_math, 2025-12)
with upstream's meaning and defaults; each one changes what is loaded or how it is judged."""

import i3_math
import pytest
from i3_math import load_environment

from verifiers.testing import (
    JUDGED_TASK_CHECKS,
    UPSTREAM_JUDGED_DEFAULTS,
    problems_of,
    signature_defaults,
)

# name -> upstream default
UPSTREAM = {
    **UPSTREAM_JUDGED_DEFAULTS,
    "dataset_subset": "math",
    "difficulty_key": "avg@8_qwen3_4b_thinking_2507",
}


def test_every_upstream_argument_has_upstream_default():
    assert signature_defaults(load_environment, UPSTREAM) == UPSTREAM
    env = load_environment(source="sample", **UPSTREAM)
    assert len(env.dataset) == 17  # the defaults filter nothing


def test_pass_rate_window_and_difficulty_key_change_the_rows():
    all_rows = problems_of(load_environment(source="sample"))
    hard = problems_of(load_environment(source="sample", min_avg_reward=0.0, max_avg_reward=0.5))
    assert 0 < len(hard) < len(all_rows) and set(hard) < set(all_rows)
    other_key = problems_of(
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
