"""buggy_tables: a statistic of the repaired table, with exactly two decimals."""

from __future__ import annotations

import operator
import statistics
from collections.abc import Callable

import pytest
from i3_logic import Puzzle, PuzzleDataError, load_environment, puzzle_from_info, verify
from i3_logic.families import buggy_tables as fam
from i3_logic_testkit import broken_answers_test, real_rows, replies_test

import verifiers as vf

OPS = {
    ">": operator.gt,
    "<": operator.lt,
    ">=": operator.ge,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
}
STATS: dict[str, Callable[[list[float]], float]] = {
    "mean": statistics.mean,
    "median": statistics.median,
    "sum": sum,
    "max": max,
    "min": min,
    "stdev": statistics.stdev,
    "variance": statistics.variance,
}


def solve(meta: dict) -> str:
    """Recompute from the original table and the stored query (conditions as 'col op value')."""
    q = meta["query_result"]
    rows = meta["original_table"]
    for condition in q["conditions"]:
        col, op, value = condition.split()
        rows = [r for r in rows if OPS[op](r[col], float(value))]
    a, b = q["columns_compared"]
    stat = STATS[q["statistic"]]
    return f"{abs(stat([r[a] for r in rows]) - stat([r[b] for r in rows])):.2f}"


@pytest.mark.parametrize("row", real_rows("buggy_tables"))
def test_rows_are_right(row):
    pz = puzzle_from_info(row["info"])
    assert pz.answer == pz.metadata["target_answer"] == solve(pz.metadata)
    for i, record in enumerate(pz.metadata["original_table"]):  # the shown table is the data
        shown = pz.metadata["buggy_table"].splitlines()[2 + i]
        cells = [c.strip() for c in shown.strip("|").split("|")]
        assert all(c in ("ERROR", str(v)) for c, v in zip(cells, record.values(), strict=True))


def test_skipped_by_default_served_with_an_empty_skip_list():
    public = [
        {k: v for k, v in r.items() if not k.startswith("_")} for r in real_rows("buggy_tables")
    ]
    with pytest.raises(vf.ConfigError, match="no rows left"):
        load_environment(source=public)  # upstream's default tasks_to_skip drops them all
    assert len(load_environment(source=public, tasks_to_skip=[]).dataset) == len(public)


VALUE = Puzzle("buggy_tables", "q", "1234.50", 1, {})


test_verdicts = replies_test(
    VALUE,
    [
        ("The difference is 1234.50", 1.0),
        ("Work...\n\n**Final answer:** 1234.50.", 1.0),
        ("Work...\nFinal answer: 1,234.50", 1.0),  # upstream read this as 234.50
        ("\\boxed{1234.50}", 1.0),
        ("The mean of A is 1500.25 and of B 265.75.\nSo the answer is 1234.50.", 1.0),
        ("Final answer: 1234.5", 0.0),  # two decimals are required, as upstream
        ("Final answer: 1234.500", 0.0),
        ("Final answer: 1234", 0.0),
        ("Final answer: 1234.51", 0.0),
        ("Final answer: approximately 1234.50", 0.0),
        ("Final answer: 1234.50 or 1234.51", 0.0),
        ("Final answer: 1234.50\n\nHope this helps!", 1.0),  # a closing line without digits
        ("It is 1234.50.\nBut over 3 rows it is 1234.5.", 0.0),  # the last line with a digit
        ("Final answer: -1234.50", 0.0),
        ("", 0.0),
    ],
)


test_check_rejects_broken_answers = broken_answers_test(
    fam.check, "buggy_tables", ["", "12.5", "unknown", "12"]
)


def test_check_rejects_a_disagreeing_target_answer():
    with pytest.raises(PuzzleDataError, match="disagrees"):
        fam.check(Puzzle("buggy_tables", "q", "1.00", 1, {"target_answer": "2.00"}))


HEDGE = object()  # the response offers no single value
JUDGED = [  # (response, the value it states, verdict) for the first row
    ("346.50", "346.50", 1),
    ("Final answer: 346.50", "346.50", 1),
    ("**346.50**", "346.50", 1),
    ("346.50.", "346.50", 1),
    ("346.5", "346.5", 0),  # two decimals are required
    ("346", "346", 0),
    ("347.50", "347.50", 0),
    ("371.75", "371.75", 0),  # one mean, not the difference
    ("about 346.50", HEDGE, 0),
    ("346.50 or 347.50", HEDGE, 0),
]


@pytest.mark.parametrize(("response", "meaning", "verdict"), JUDGED)
def test_judged_table(response, meaning, verdict):
    pz = puzzle_from_info(real_rows("buggy_tables")[0]["info"])
    truth = solve(pz.metadata)
    assert (meaning is not HEDGE and meaning == truth) == bool(verdict)
    assert verify(pz, f"<answer>{response}</answer>") == verdict
    assert verify(pz, f"Working through the table.\n{response}") == verdict  # no answer block
