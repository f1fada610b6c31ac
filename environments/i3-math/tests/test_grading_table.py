"""i3-math agrees with every verdict of the SDK's grading table
(``packages/verifiers/tests/data/grading_table.jsonl``, built by ``bench/grading/make_table.py``).

The SDK's own test (``test_exact_answers.py``) grades the table with `MathRubric`; grading it
again here would prove nothing more where i3-math sends `grade_math_answer` the same
arguments. So each row's arguments are compared with the SDK rubric's (the environment's
parser, tolerance, question, timeout), and only a row whose arguments differ is graded again;
a sample also goes through the environment's pool end to end.
"""

from pathlib import Path

from i3_math import load_environment

from verifiers import MathRubric, grade_math_answer
from verifiers.testing import SdkGradingTable, table_messages

TABLE = SdkGradingTable(load_environment, Path(__file__).parents[3])
ROWS = TABLE.rows


def test_every_row_is_graded_as_the_sdk_table_grades_it():
    sdk = {tol: MathRubric(numeric_rel_tol=tol) for tol in TABLE.envs}
    wrong = []
    for row in ROWS:
        prompt, completion = table_messages(row)
        args = TABLE.envs[row["rel_tol"]].rubric.math.grading_args(completion, row["gold"], prompt)
        if args == sdk[row["rel_tol"]].grading_args(completion, row["gold"], prompt):
            continue  # the SDK's table test grades exactly this call
        got = 0 if args is None else int(grade_math_answer(*args)[0])
        if got != row["verdict"]:
            wrong.append((row["id"], row["proof"], got))
    assert wrong == [], wrong


def test_sample_through_the_pool():
    """Every 12th row scored by the environment itself: same verdicts via the pool."""
    sample = ROWS[::12]
    assert TABLE.pool_rewards(sample, "i3-math") == [float(r["verdict"]) for r in sample]
