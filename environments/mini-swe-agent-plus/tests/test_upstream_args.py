"""mini-swe-agent-plus takes upstream's load_environment arguments (prime-environments
mini_swe_agent_plus, 2025-12) with upstream's meaning and defaults, and upstream's fixed
sandbox size (8 CPUs, 8 GB, 10 GB disk) as its default limits."""

import inspect
import json
from pathlib import Path

import pytest
from mini_swe_agent_plus import SAMPLE, MiniSweAgentPlusEnv, load_environment

import verifiers as vf
from verifiers.testing import write_hub_dataset

GiB = 2**30

# name -> upstream default
UPSTREAM = {
    "dataset_name": "R2E-Gym/R2E-Gym-Subset",
    "max_turns": 200,
    "total_timeout_minutes": 120,
    "test_timeout": 3600,
}
ROWS = [json.loads(line) for line in SAMPLE.read_text().splitlines()]


def test_every_upstream_argument_has_upstream_default():
    params = inspect.signature(load_environment).parameters
    assert {k: params[k].default for k in UPSTREAM} == UPSTREAM
    env = load_environment(**UPSTREAM)
    assert env.max_turns == 200 and env.test_timeout == 3600
    assert env.spec.lifetime == 120 * 60
    # upstream hard-codes the sandbox size; here it is the default of three arguments
    assert (env.spec.cpu, env.spec.memory, env.spec.disk) == (8.0, 8 * GiB, 10 * GiB)


def test_arguments_change_the_environment():
    env = load_environment(
        max_turns=7, total_timeout_minutes=5, test_timeout=60, cpu_cores=2, memory_gb=3
    )
    assert (env.max_turns, env.test_timeout, env.spec.lifetime) == (7, 60, 300)
    assert (env.spec.cpu, env.spec.memory) == (2.0, 3 * GiB)


@pytest.fixture
def local_hub(tmp_path: Path, monkeypatch) -> Path:
    """Two dataset folders read by `datasets` like hub repositories: one with train and test
    splits, one whose name contains "bench" (upstream reads its test split)."""
    for name in ("gym", "swe-bench-like"):  # one schema for both splits
        splits: dict[str | tuple[str, str], list[dict]] = {
            s: [dict(ROWS[0], instance_id=f"{s}__row")] for s in ("train", "test")
        }
        write_hub_dataset(tmp_path / name, splits)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return tmp_path


def test_dataset_name_and_upstream_split_rule(local_hub):
    def ids(name: str, **kw) -> list[str]:
        env = load_environment(source="hub", dataset_name=str(local_hub / name), **kw)
        assert isinstance(env, MiniSweAgentPlusEnv)
        return list(env.tasks)

    assert ids("gym") == ["train__row"]
    assert ids("swe-bench-like") == ["test__row"]  # "bench" in the name: the test split
    assert ids("gym", split="test") == ["test__row"]


def test_unknown_argument_is_refused_naming_the_accepted_ones():
    with pytest.raises(vf.ConfigError, match=r"does not take 'timeout_minutes'.*total_timeout"):
        vf.load_environment("mini-swe-agent-plus", timeout_minutes=10)
