import json

import pytest

import verifiers as vf
from verifiers.data_sources import hub_reachable


@pytest.fixture
def sample(tmp_path):
    path = tmp_path / "sample.jsonl"
    rows = [{"question": "1+1", "answer": "2"}, {"question": "2+3", "answer": "5"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_sample_source_reads_bundled_rows(sample):
    ds = vf.load_dataset_source("org/data", source="sample", sample=sample)
    assert ds["answer"] == ["2", "5"]


def test_rows_and_dataset_sources(sample):
    from datasets import Dataset

    rows = [{"question": "q", "answer": "a"}]
    assert vf.load_dataset_source(None, source=rows)["question"] == ["q"]
    ds = Dataset.from_list(rows)
    assert vf.load_dataset_source(None, source=ds) is ds


def test_source_rows_keep_a_list_as_given_and_describe_where_rows_came_from(sample, tmp_path):
    mixed = [{"question": "q", "answer": 42}, {"question": "r", "answer": "x"}]
    rows, what = vf.load_source_rows("org/data", source=mixed)
    assert rows == mixed and what == "rows"  # no Arrow table: per-row types survive
    with pytest.raises(vf.ConfigError, match="must be dicts"):
        vf.load_source_rows("org/data", source=[{"question": "q"}, "not a row"])
    rows, what = vf.load_source_rows(
        "org/data", source="sample", sample=sample, drop_columns=["answer", "absent"]
    )
    assert rows == [{"question": "1+1"}, {"question": "2+3"}] and what == "sample sample.jsonl"
    (tmp_path / "d.json").write_text(json.dumps([{"question": "q1"}]))
    with pytest.raises(vf.ConfigError, match=r"dataset .*d\.json lacks column\(s\) answer"):
        vf.load_source_rows(None, source=tmp_path / "d.json", required_columns=["answer"])


def test_local_files_of_each_format(tmp_path):
    from datasets import Dataset

    ds = Dataset.from_list([{"question": "q1", "answer": "a1"}])
    ds.to_parquet(tmp_path / "d.parquet")
    ds.to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "d.json").write_text(json.dumps([{"question": "q1", "answer": "a1"}]))
    ds.save_to_disk(tmp_path / "saved")
    for name in ("d.parquet", "d.csv", "d.json", "saved"):
        loaded = vf.load_dataset_source(None, source=tmp_path / name)
        assert loaded["answer"] == ["a1"], name


def test_missing_column_names_it(sample):
    with pytest.raises(vf.ConfigError, match="lacks column.*info"):
        vf.load_dataset_source("x", source="sample", sample=sample, required_columns=["info"])


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("nope.jsonl", "does not exist"),
        (42, "source must be"),
        ([1, 2], "must be dicts"),
    ],
)
def test_bad_sources_are_config_errors(source, message):
    with pytest.raises(vf.ConfigError, match=message):
        vf.load_dataset_source("x", source=source)


def test_broken_json_sample_is_a_config_error(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": \n')
    with pytest.raises(vf.ConfigError, match="not valid JSON"):
        vf.load_dataset_source(None, source=bad)


def test_rows_of_mixed_types_name_the_column(tmp_path):
    rows = [{"question": "q1", "answer": "2"}, {"question": "q2", "answer": 3}]
    with pytest.raises(
        vf.ConfigError, match="column 'answer' holds str in row 0 but number in row 1"
    ):
        vf.load_dataset_source(None, source=rows)
    path = tmp_path / "mixed.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(vf.ConfigError, match=f"{path.name} do not fit one table: column 'answer'"):
        vf.load_dataset_source(None, source=path)
    mixed_numbers = [{"x": 1}, {"x": 2.5}, {"x": None}]  # ints and floats do fit one column
    assert vf.load_dataset_source(None, source=mixed_numbers)["x"] == [1.0, 2.5, None]


def test_auto_falls_back_to_sample_when_hub_unreachable(sample, unreachable_hub, caplog):
    with caplog.at_level("WARNING", logger="verifiers.data"):
        ds = vf.load_dataset_source("org/data", sample=sample)
    assert ds["answer"] == ["2", "5"]
    assert "unreachable" in caplog.text


def test_auto_without_sample_reports_the_hub_error(unreachable_hub):
    with pytest.raises(vf.ConfigError, match="could not load org/data: .*unreachable"):
        vf.load_dataset_source("org/data")


def test_hub_source_fails_clearly_when_unreachable(unreachable_hub):
    assert hub_reachable() is False
    with pytest.raises(vf.ConfigError, match="could not load org/missing: .*unreachable"):
        vf.load_dataset_source("org/missing", source="hub")
