"""`summarize` reads the library's own records a column at a time (issue 30 item 1); these
check that it gives the row-at-a-time figures bit for bit, and when it must not be used."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from verifiers.results import summarize as summarize_from_results
from verifiers.run_summary import _Columns, summarize


class Row(dict):  # a dict of another type: always summarised row by row
    pass


def records(seed: int, *, per_example: int | None = None, n: int = 60) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        example = i // (per_example or rng.randint(1, 6))
        reward = rng.choice([rng.random(), 0.0, 1.0, 1, 0, True, math.nan, -0.25, 3.5e-17])
        out.append(
            {
                "example_id": example,
                "rollout_index": i,
                "reward": reward,
                "error": None,
                "metrics": {"correct": rng.random(), "fmt": rng.choice([0.0, 1.0, math.inf])},
                "token_usage": {"input_tokens": rng.randint(0, 900), "output_tokens": i},
            }
        )
    return out


def both(outputs: list[dict[str, Any]], **kwargs: Any) -> tuple[str, str]:
    fast = summarize(outputs, **kwargs)
    slow = summarize([Row(o) for o in outputs], **kwargs)
    return repr(fast), repr(slow)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("threshold", [0.5, 1, 0.0])
def test_columns_give_the_row_by_row_figures_exactly(seed: int, threshold: float) -> None:
    outputs = records(seed, per_example=(seed % 4) + 1)
    assert _Columns.read(outputs) is not None  # the column path is the one taken
    fast, slow = both(outputs, pass_threshold=threshold)
    assert fast == slow
    assert "pass_at_k" in fast


@pytest.mark.parametrize(
    "change",
    [
        lambda o: o[3].update(error={"error": "ModelError", "message": "down"}),
        lambda o: o[5].pop("token_usage"),
        lambda o: o[2]["metrics"].pop("fmt"),
        lambda o: o[2]["metrics"].update(extra=1.0),
        lambda o: o[7]["metrics"].update(fmt="yes"),
        lambda o: o[4].update(reward=None),
        lambda o: o[1].update(token_usage={}),
        lambda o: o[0].update(metrics=None),
    ],
    ids=[
        "an-error",
        "no-usage-key",
        "a-metric-missing",
        "an-extra-metric",
        "a-text-metric",
        "reward-none",
        "one-usage-empty",
        "metrics-none",
    ],
)
def test_records_the_columns_cannot_read_are_summarised_row_by_row(change: Any) -> None:
    outputs = records(3)
    change(outputs)
    fast, slow = both(outputs)
    assert fast == slow


def test_a_metric_of_mixed_types_keeps_only_its_finite_numbers() -> None:
    outputs = records(5, per_example=2, n=8)
    for o, value in zip(outputs, [1, True, 0.5, math.nan, 2.0, 0, 1.5, 1.0], strict=True):
        o["metrics"]["fmt"] = value
    assert _Columns.read(outputs) is not None
    fast, slow = both(outputs)
    assert fast == slow


def test_no_rollouts_and_no_finite_reward() -> None:
    assert repr(summarize([])) == repr(summarize([Row()][:0]))
    outputs = records(1, n=6)
    for o in outputs:
        o["reward"] = math.nan
    fast, slow = both(outputs)
    assert fast == slow
    assert summarize(outputs)["scored_rollouts"] == 0


def test_results_still_answers_summarize() -> None:
    assert summarize_from_results is summarize
