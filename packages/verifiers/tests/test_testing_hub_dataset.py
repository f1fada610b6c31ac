"""verifiers.testing.write_hub_dataset: a folder `datasets.load_dataset` reads like a hub repo."""

from __future__ import annotations

import datasets
import pytest

from verifiers.testing import write_hub_dataset


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def test_configs_and_splits_load_as_written(tmp_path):
    folder = write_hub_dataset(
        tmp_path / "repo",
        {
            ("math", "train"): [{"q": "m1"}, {"q": "m2"}],
            ("math", "test"): [{"q": "m3"}],
            ("code", "train"): [{"q": "c1", "n": 1}],
        },
    )
    assert folder == tmp_path / "repo"
    assert list(datasets.load_dataset(str(folder), "math", split="train")) == [
        {"q": "m1"},
        {"q": "m2"},
    ]
    assert list(datasets.load_dataset(str(folder), "math", split="test")) == [{"q": "m3"}]
    assert list(datasets.load_dataset(str(folder), "code", split="train")) == [{"q": "c1", "n": 1}]
    with pytest.raises(ValueError):
        datasets.load_dataset(str(folder), "math", split="validation")


def test_split_names_alone_are_the_default_config(tmp_path):
    folder = write_hub_dataset(tmp_path / "repo", {"qa_rl": [{"q": 1}], "qa_sft": [{"q": 2}]})
    assert list(datasets.load_dataset(str(folder), split="qa_sft")) == [{"q": 2}]


def test_new_rows_under_the_same_name_are_never_read_stale(tmp_path):
    """`datasets` caches builds by the card's file names; rewriting a repository with other
    rows (the next test run, the same tmp folder name) must read the new rows."""
    for value in ("first", "second"):
        folder = write_hub_dataset(tmp_path / value / "repo", {"train": [{"q": value}]})
        assert list(datasets.load_dataset(str(folder), split="train")) == [{"q": value}]
