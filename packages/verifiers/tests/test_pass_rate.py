import asyncio
import math

import orjson
import pytest
from datasets import Dataset

import verifiers as vf
from verifiers.utils.shared import SharedTasks


def rated(rates, **extra):
    n = len(rates)
    return Dataset.from_dict(
        {"question": [f"q{i}" for i in range(n)], "answer": [str(i) for i in range(n)], "r": rates}
        | extra
    )


def test_inactive_filter_keeps_everything_and_needs_no_column():
    ds = Dataset.from_dict({"question": ["a"], "answer": ["1"]})
    assert not vf.PassRateFilter("missing").active
    assert vf.PassRateFilter("missing").apply(ds) is ds
    assert not vf.PassRateFilter(None, 0.2, 0.5).active  # no key: nothing to filter on


def test_band_is_inclusive_and_unrated_rows_follow_keep_unrated():
    ds = rated([0.0, 0.25, 0.5, None, float("nan"), 0.75, 1.0])
    kept = vf.PassRateFilter("r", 0.25, 0.75).apply(ds)
    assert kept["question"] == ["q1", "q2", "q5"]
    kept = vf.PassRateFilter("r", 0.25, 0.75, keep_unrated=True).apply(ds)
    assert kept["question"] == ["q1", "q2", "q3", "q4", "q5"]


@pytest.mark.parametrize("lo, hi", [(-0.1, 1.0), (0.6, 0.4), (0.0, 1.5)])
def test_bad_band_names_the_callers_parameters(lo, hi):
    with pytest.raises(vf.ConfigError, match="min_solve_rate <= max_solve_rate"):
        vf.PassRateFilter("r", lo, hi, param_names=("min_solve_rate", "max_solve_rate"))


def test_active_filter_errors():
    with pytest.raises(vf.ConfigError, match="has no column 'r' .*question, answer"):
        vf.PassRateFilter("r", 0.1, 0.9).apply(
            Dataset.from_dict({"question": ["a"], "answer": ["1"]})
        )
    with pytest.raises(vf.ConfigError, match="row 0: difficulty column 'r' holds '0.5'"):
        vf.PassRateFilter("r", 0.1, 0.9).apply(rated(["0.5", "hard"]))
    with pytest.raises(vf.ConfigError, match=r"no row of rows \(2 rows\) is left .*1 unrated"):
        vf.PassRateFilter("r", 0.4, 0.6).apply(rated([0.1, None]), what="rows")


def test_prepare_qa_dataset_builds_columns_and_keeps_row_provenance():
    ds = rated([0.9, 0.5, None], info=['{"domain": "x"}', None, None])
    out = vf.prepare_qa_dataset(
        ds, instruction="Solve.", pass_rate=vf.PassRateFilter("r", 0.0, 0.6), task="t"
    )
    assert out["question"] == ["Solve.\n\nq1"]
    assert out["answer"] == ["1"] and out["task"] == ["t"]
    assert orjson.loads(out["info"][0]) == {"source_row": 1, "avg_reward": 0.5}
    first = vf.prepare_qa_dataset(ds)  # no instruction, no filter, no task column
    assert first["question"] == ["q0", "q1", "q2"] and "task" not in first.column_names
    assert orjson.loads(first["info"][0]) == {"domain": "x", "source_row": 0, "avg_reward": None}


def test_prepare_qa_dataset_writes_numbers_and_names_unusable_rows():
    ds = Dataset.from_list(
        [{"question": f"q{i}", "answer": a} for i, a in enumerate(["7", "", " ", "ok", None] * 2)]
    )
    with pytest.raises(vf.ConfigError) as e:
        vf.prepare_qa_dataset(ds, what="my data")
    msg = str(e.value)
    assert msg.startswith("my data has 6 unusable row(s): row 1: answer is ''")
    assert "row 2:" in msg and "and 1 more" in msg
    out = vf.prepare_qa_dataset(Dataset.from_list([{"question": "q", "answer": 7.5}]))
    assert out["answer"] == ["7.5"]
    assert vf.prepare_qa_dataset(Dataset.from_list([{"question": "q", "answer": 3}]))["answer"] == [
        "3"
    ]
    with pytest.raises(vf.ConfigError, match="^empty data has no rows$"):
        vf.prepare_qa_dataset(Dataset.from_dict({"question": [], "answer": []}), what="empty data")
    with pytest.raises(vf.ConfigError, match="row 0: answer is nan"):
        vf.prepare_qa_dataset(Dataset.from_list([{"question": "q", "answer": math.nan}]))


async def test_shared_tasks_run_once_per_key_and_survive_a_cancelled_waiter():
    shared: SharedTasks[int] = SharedTasks()
    calls = []
    release = asyncio.Event()

    async def work(key):
        calls.append(key)
        await release.wait()
        return key * 10

    waiters = [asyncio.create_task(shared.run(k, lambda k=k: work(k))) for k in (1, 1, 2)]
    while len(calls) < 2:
        await asyncio.sleep(0)
    assert calls == [1, 2] and len(shared) == 2
    waiters[0].cancel()  # one caller goes away; the other still gets the shared result
    release.set()
    assert await waiters[1] == 10 and await waiters[2] == 20
    assert waiters[0].cancelled() and len(shared) == 0
    assert await shared.run(1, lambda: work(1)) == 10  # finished tasks are forgotten
    assert calls == [1, 2, 1]
