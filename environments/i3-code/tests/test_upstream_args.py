"""i3-code takes upstream's load_environment arguments (prime-environments i3_code, 2025-12)
with upstream's meaning and defaults; each one changes what is loaded or how it runs."""

import inspect
import json
from pathlib import Path

import pytest
from i3_code import SAMPLE, load_environment

import verifiers as vf
from verifiers.sandbox import ProcessProvider
from verifiers.testing import offline_hub

# name -> upstream default
UPSTREAM = {
    "dataset_name": "PrimeIntellect/INTELLECT-3-RL",
    "dataset_subset": "code",
    "dataset_split": "train",
    "dataset_shuffle": False,
    "dataset_num_proc": 1,
    "difficulty_key": "avg@8_qwen3_4b_instruct_2507",
    "min_solve_rate": 0.0,
    "max_solve_rate": 1.0,
    "timeout_per_test": 10,
    "max_num_tests": 15,
    "skip_first": 0,
    "docker_image": None,
    "pool_size": 10,
    "timeout_minutes": 360,
}


def questions(env: vf.Environment) -> list[str]:
    return list(env.get_dataset()["question"])


def test_every_upstream_argument_has_upstream_default():
    params = inspect.signature(load_environment).parameters
    assert {k: params[k].default for k in UPSTREAM} == UPSTREAM
    env = load_environment(source="sample", **UPSTREAM)
    assert len(env.get_dataset()) == 12  # the defaults filter nothing
    assert env.pool_size == 10 and env.timeout_per_test == 10
    assert env.spec.lifetime == 360 * 60 and env.spec.image is None


def test_solve_rate_window_skip_first_and_difficulty_key_change_the_rows():
    every = questions(load_environment(source="sample"))
    hard = questions(load_environment(source="sample", max_solve_rate=0.6))
    assert 0 < len(hard) < len(every) and set(hard) < set(every)
    assert questions(load_environment(source="sample", skip_first=3)) == every[3:]
    rows = [json.loads(line) for line in SAMPLE.read_text().splitlines()]
    for row in rows:
        row["other_rate"] = 1.0 - row.pop("avg@8_qwen3_4b_instruct_2507")
    flipped = questions(
        load_environment(source=rows, difficulty_key="other_rate", min_solve_rate=0.4)
    )
    assert set(flipped) == set(hard)  # the window is read from the named column


def test_dataset_shuffle_and_num_proc():
    plain = load_environment(source="sample").get_dataset()
    shuffled = questions(load_environment(source="sample", dataset_shuffle=True))
    assert shuffled != list(plain["question"]) and sorted(shuffled) == sorted(plain["question"])
    parallel = load_environment(source="sample", dataset_num_proc=2).get_dataset()
    assert parallel.to_list() == plain.to_list()
    with pytest.raises(vf.ConfigError, match="dataset_num_proc"):
        load_environment(source="sample", dataset_num_proc=0)


def test_max_num_tests_timeout_per_test_and_timeout_minutes():
    env = load_environment(source="sample", max_num_tests=2, timeout_per_test=3, timeout_minutes=5)
    infos = env.get_dataset()["info"]
    assert max(i["num_test_cases"] for i in infos) == 2
    assert {i["timeout"] for i in infos} == {3.0} and env.timeout_per_test == 3
    assert env.spec.lifetime == 300
    full = load_environment(source="sample", max_num_tests=None).get_dataset()["info"]
    assert max(i["num_test_cases"] for i in full) > 2


class ImageProvider(ProcessProvider):
    """A provider that declares it runs images (none can run here): the spec must carry it."""

    supports_images = True


def test_docker_image_needs_a_provider_that_runs_images(monkeypatch):
    with pytest.raises(vf.ConfigError, match="docker_image='python:3.11-slim'.*supports_images"):
        load_environment(source="sample", docker_image="python:3.11-slim")
    env = load_environment(source="sample", docker_image="i3-code:latest", provider=ImageProvider())
    assert env.spec.image == "i3-code:latest"
    monkeypatch.setenv("I3_CODE_DOCKER_IMAGE", "from-env:1")
    assert load_environment(source="sample", provider=ImageProvider()).spec.image == "from-env:1"
    assert load_environment(source="sample").spec.image is None  # local runtime: not read


@pytest.fixture
def local_hub(tmp_path: Path, monkeypatch) -> Path:
    """Two configs with two splits each, read by `datasets` like a hub repository."""
    row = json.loads(SAMPLE.read_text().splitlines()[0])
    return offline_hub(tmp_path, monkeypatch, ("code", "other"), ("train", "test"), row)


def test_dataset_name_subset_split_pick_the_rows(local_hub):
    def load(**kw) -> list[str]:
        env = load_environment(source="hub", dataset_name=str(local_hub), **kw)
        return [q.rsplit("\n\n", 1)[-1] for q in questions(env)]

    assert load() == ["code-train problem"]
    assert load(dataset_subset="other", dataset_split="test") == ["other-test problem"]


def test_unknown_argument_is_refused_naming_the_accepted_ones():
    with pytest.raises(
        vf.ConfigError, match=r"does not take 'load_from_cache_file'.*dataset_shuffle"
    ):
        vf.load_environment("i3-code", source="sample", load_from_cache_file=False)
