"""Upstream's load_environment arguments, with upstream's meanings and defaults, on the bundled
sample (its rows carry releases v1, v4, v5 and v6 and contest dates inside and outside the
benchmark's window, so every selection is visible)."""

from __future__ import annotations

import json

import pytest
from livecodebench import DATASET, SAMPLE, SYSTEM_PROMPT, load_environment

import verifiers as vf

SAMPLE_ROWS = [json.loads(line) for line in SAMPLE.read_text().splitlines()]
ALL_DATES = {"start_date": None, "end_date": None}


def ids(env) -> list[str]:
    return [r["info"]["question_id"] for r in env.get_eval_dataset()]


def sample_ids(releases: set[str], lo: str = "", hi: str = "9999") -> list[str]:
    return [
        r["question_id"]
        for r in SAMPLE_ROWS
        if r["version"] in releases and lo <= r["contest_date"][:10] <= hi
    ]


@pytest.mark.parametrize(
    ("version", "releases"),
    [
        ("v1", {"v1"}),
        ("v4", {"v1", "v4"}),
        ("v5", {"v1", "v4", "v5"}),
        ("v6", {"v1", "v4", "v5", "v6"}),
    ],
)
def test_version_is_cumulative_as_upstream(version, releases):
    assert ids(load_environment(source="sample", version=version, **ALL_DATES)) == sample_ids(
        releases
    )


def test_defaults_are_upstreams_window():
    env = load_environment(source="sample")
    window = sample_ids({"v1", "v4", "v5", "v6"}, "2024-08-01", "2025-05-01")
    assert ids(env) == window and 0 < len(window) < len(SAMPLE_ROWS)
    assert env.system_prompt == SYSTEM_PROMPT
    assert env.timeout_per_test == 6.0
    assert env.pool_size == 10
    assert env.sandbox_retries == 4  # upstream's max_retries=5 attempts


def test_upstream_date_format():
    upstream = load_environment(source="sample", start_date="8/1/2024", end_date="5/1/2025")
    assert ids(upstream) == ids(load_environment(source="sample"))
    narrow = load_environment(source="sample", start_date="1/18/2025", end_date="2/8/2025")
    assert ids(narrow) == sample_ids({"v1", "v4", "v5", "v6"}, "2025-01-18", "2025-02-08")
    with pytest.raises(vf.ConfigError, match="M/D/YYYY"):
        load_environment(source="sample", start_date="13/45/2024")


def test_difficulty_system_prompt_timeout_pool():
    env = load_environment(
        source="sample",
        difficulty="medium",
        system_prompt="Write Python.",
        timeout_per_test=2,
        pool_size=3,
        **ALL_DATES,
    )
    assert ids(env) == [r["question_id"] for r in SAMPLE_ROWS if r["difficulty"] == "medium"]
    assert env.system_prompt == "Write Python." and env.timeout_per_test == 2
    assert env.pool_size == 3


def test_max_retries_and_sandbox_retries():
    assert load_environment(source="sample", max_retries=2).sandbox_retries == 1
    assert load_environment(source="sample", sandbox_retries=3).sandbox_retries == 3
    with pytest.raises(vf.ConfigError, match="not both"):
        load_environment(source="sample", max_retries=2, sandbox_retries=3)
    with pytest.raises(vf.ConfigError, match="max_retries must be an integer >= 1"):
        load_environment(source="sample", max_retries=0)


def test_version_errors_and_release_version_override():
    with pytest.raises(vf.ConfigError, match="version must be one of v1, v2"):
        load_environment(source="sample", version="release_v6")
    with pytest.raises(vf.ConfigError, match="not both"):
        load_environment(source="sample", version="v4", release_version="v6")
    # ours: a single release
    only6 = load_environment(source="sample", release_version="v6", **ALL_DATES)
    assert ids(only6) == sample_ids({"v6"})


def test_dataset_name_is_what_the_hub_path_reads(monkeypatch):
    # no hub here: the error names the dataset asked for, not the default one
    monkeypatch.setattr("livecodebench.hub_reachable", lambda *a, **k: False)
    with pytest.raises(vf.ConfigError, match="could not load someone/lcb-copy"):
        load_environment(source="hub", dataset_name="someone/lcb-copy")
    assert DATASET == "livecodebench/code_generation_lite"


def test_unknown_argument_is_a_clear_error():
    with pytest.raises(TypeError, match="unexpected keyword argument 'max_tokens'"):
        load_environment(source="sample", max_tokens=10)
    with pytest.raises(vf.ConfigError, match="does not take 'max_tokens'.*dataset_name, version"):
        vf.load_environment("livecodebench", source="sample", max_tokens=10)
