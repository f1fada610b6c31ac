"""i3-science takes upstream's load_environment arguments (prime-environments i3_science,
2025-12) with upstream's meaning and defaults (one deliberate exception, difficulty_key); each
one changes what is loaded or how it is judged."""

import i3_science
import pytest
from i3_science import load_environment

import verifiers as vf
from verifiers.testing import (
    JUDGED_TASK_CHECKS,
    UPSTREAM_JUDGED_DEFAULTS,
    problems_of,
    signature_defaults,
)

# name -> upstream default
UPSTREAM = {
    **UPSTREAM_JUDGED_DEFAULTS,
    "dataset_subset": "science",
}


def test_every_upstream_argument_has_upstream_default():
    assert signature_defaults(load_environment, UPSTREAM) == UPSTREAM
    env = load_environment(source="sample", **UPSTREAM)
    assert len(env.dataset) == 16  # the defaults filter nothing
    # upstream's default key names a column the science config lacks (every row read as 0);
    # ours names the real one, and a window on a missing column is an error
    ours = signature_defaults(load_environment, ["difficulty_key"])
    assert ours == {"difficulty_key": "avg@16_qwen3_4b_instruct_2507"}


def test_pass_rate_window_and_difficulty_key_change_the_rows():
    all_rows = problems_of(load_environment(source="sample"))
    hard = problems_of(load_environment(source="sample", min_avg_reward=0.0, max_avg_reward=0.5))
    assert 0 < len(hard) < len(all_rows) and set(hard) < set(all_rows)
    easy = problems_of(load_environment(source="sample", min_avg_reward=0.9))
    assert easy and not set(easy) & set(hard)
    with pytest.raises(vf.ConfigError, match="avg@8_qwen3_4b_instruct_2507"):
        load_environment(
            source="sample", difficulty_key="avg@8_qwen3_4b_instruct_2507", max_avg_reward=0.5
        )


@pytest.mark.parametrize("check", JUDGED_TASK_CHECKS, ids=lambda check: check.__name__)
async def test_shared_judged_task_check(check, tmp_path, monkeypatch):
    """The rest of upstream's arguments, and the published prompts loaded at run time, as every
    `vf.JudgedBoxedTask` environment takes them (`verifiers.testing.judged_tasks`)."""
    await check(i3_science, tmp_path, monkeypatch)
