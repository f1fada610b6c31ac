"""i3-science agrees with every verdict of the SDK's grading table
(``packages/verifiers/tests/data/grading_table.jsonl``, built by ``bench/grading/make_table.py``).

Each row is graded in-process exactly as the worker pool grades it (the environment's parser,
then `check_answer` with the rubric's own arguments: tolerance, question, timeout), so
the whole table takes seconds; a sample also goes through the pool end to end.
"""

from pathlib import Path

import pytest
from i3_science import check_answer, load_environment

from verifiers.testing import SdkGradingTable, table_messages

TABLE = SdkGradingTable(load_environment, Path(__file__).parents[3])
ROWS = TABLE.rows


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_row(row):
    prompt, completion = table_messages(row)
    rubric = TABLE.envs[row["rel_tol"]].rubric
    response = rubric.parser.parse_answer(completion) or ""
    args = rubric.check_args(prompt, row["gold"], response)
    ok = response and len(response) <= rubric.max_answer_chars and args is not None
    got = int(check_answer(*args)[0]) if ok else 0
    assert got == row["verdict"], row["proof"]


def test_sample_through_the_pool():
    """Every 12th row scored by the environment itself: same verdicts via the pool."""
    sample = ROWS[::12]
    assert TABLE.pool_rewards(sample, "i3-science") == [float(r["verdict"]) for r in sample]
