"""i3-logic takes upstream's load_environment arguments (prime-environments i3_logic, 2025-12)
with upstream's meaning and defaults, for the INTELLECT-3-RL rows it loads."""

import inspect
import json
from pathlib import Path
from typing import Any

import pytest
from i3_logic import SAMPLE, load_environment

import verifiers as vf
from verifiers.testing import jsonl_rows, write_hub_dataset

# name -> upstream default
UPSTREAM: dict[str, Any] = {
    "dataset_name": "PrimeIntellect/INTELLECT-3-RL",
    "dataset_subset": "logic",
    "dataset_split": "train",
    "dataset_shuffle": False,
    "difficulty_key": "avg@16_qwen3_4b_instruct_2507",
    "min_avg_reward": 0.0,
    "max_avg_reward": 1.0,
    "tasks_to_skip": ["arc_agi", "arc_agi_2", "buggy_tables"],
}


def task(row: dict) -> str:
    return json.loads(row["info"])["task"]


ALL_SAMPLE_ROWS = jsonl_rows(SAMPLE)
# the sample rows upstream's default tasks_to_skip keeps
SAMPLE_ROWS = [r for r in ALL_SAMPLE_ROWS if task(r) not in UPSTREAM["tasks_to_skip"]]


def tasks(env: vf.Environment) -> list[str]:
    return [task(r) for r in env.dataset]


def test_every_upstream_argument_has_upstream_default():
    params = inspect.signature(load_environment).parameters
    ours = {k: params[k].default for k in UPSTREAM}
    ours["tasks_to_skip"] = list(ours["tasks_to_skip"])
    assert ours["dataset_shuffle"] is None  # None: loaded rows keep their order, as False
    ours["dataset_shuffle"] = False
    assert ours == UPSTREAM
    env = load_environment(source="sample", **UPSTREAM)
    # every sample row of a task not skipped, in the dataset's order (the defaults filter and
    # shuffle nothing)
    assert [r["question"] for r in env.dataset] == [r["question"] for r in SAMPLE_ROWS]
    assert len(SAMPLE_ROWS) < len(ALL_SAMPLE_ROWS)  # the sample has rows of skipped tasks
    everything = load_environment(source="sample", tasks_to_skip=[]).dataset["question"]
    assert everything == [r["question"] for r in ALL_SAMPLE_ROWS]


def test_tasks_to_skip_drops_those_tasks():
    rows = [dict(r) for r in SAMPLE_ROWS[:4]]
    rows.append(dict(rows[0], info=json.dumps({"task": "arc_agi", "game_data_str": "{}"})))
    assert tasks(load_environment(source=rows)) == [task(r) for r in rows[:4]]  # default skip
    kept = tasks(load_environment(source=rows[:4], tasks_to_skip=[task(rows[0])]))
    assert kept == [task(r) for r in rows[:4] if task(r) != task(rows[0])] and len(kept) < 4
    with pytest.raises(vf.ConfigError, match="tasks_to_skip"):
        load_environment(source="sample", tasks_to_skip="sudoku")


def test_pass_rate_window_and_difficulty_key_change_the_rows():
    every = load_environment(source="sample").dataset["question"]
    hard = load_environment(source="sample", max_avg_reward=0.5).dataset["question"]
    assert 0 < len(hard) < len(every) and set(hard) < set(every)
    rows = [dict(r, other=1.0 - r["avg@16_qwen3_4b_instruct_2507"]) for r in SAMPLE_ROWS]
    flipped = load_environment(source=rows, difficulty_key="other", min_avg_reward=0.5)
    assert set(flipped.dataset["question"]) == set(hard)


def test_dataset_shuffle_reorders_loaded_rows():
    plain = load_environment(source="sample").dataset["question"]
    shuffled = load_environment(source="sample", dataset_shuffle=True).dataset["question"]
    assert shuffled != plain and sorted(shuffled) == sorted(plain)
    grouped = tasks(
        load_environment(
            source="generate",
            families="sudoku,dyck_language",
            num_examples=3,
            dataset_shuffle=False,
        )
    )
    assert grouped == ["sudoku"] * 3 + ["dyck_language"] * 3  # generated rows: not interleaved


@pytest.fixture
def local_hub(tmp_path: Path, monkeypatch) -> Path:
    """Two configs with two splits each, read by `datasets` like a hub repository."""
    layout = {
        ("logic", "train"): 0,
        ("logic", "test"): 2,
        ("other", "train"): 4,
        ("other", "test"): 6,
    }
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return write_hub_dataset(tmp_path / "hub", {k: [SAMPLE_ROWS[i]] for k, i in layout.items()})


def test_dataset_name_subset_split_pick_the_rows(local_hub):
    def load(**kw) -> list[str]:
        return load_environment(source="hub", dataset_name=str(local_hub), **kw).dataset["question"]

    assert load() == [SAMPLE_ROWS[0]["question"]]
    assert load(dataset_subset="other", dataset_split="test") == [SAMPLE_ROWS[6]["question"]]


def test_unknown_argument_is_refused_naming_the_accepted_ones():
    with pytest.raises(vf.ConfigError, match=r"does not take 'split'.*dataset_split"):
        vf.load_environment("i3-logic", source="sample", split="test")
