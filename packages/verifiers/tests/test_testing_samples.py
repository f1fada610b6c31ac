"""`verifiers.testing.write_sample` / `reference_stdout` (issue 29 item 5): the code
environments' ``scripts/make_sample.py`` (i3-code, livecodebench) read their problems from a
TOML file and compute expected outputs by running the correct solution; written once here."""

from __future__ import annotations

import pytest

from verifiers.testing import jsonl_rows, reference_stdout, write_sample

PROBLEMS = """\
[[problem]]
name = "double"
correct = '''
print(int(input()) * 2)
'''
inputs = ["2\\n", "21\\n"]

[[problem]]
name = "echo"
correct = "print(input())"
inputs = ["hi\\n"]
"""


def test_each_problem_becomes_a_row_with_the_reference_outputs(tmp_path):
    problems = tmp_path / "problems.toml"
    problems.write_text(PROBLEMS)

    def row(name: str, correct: str, inputs: list[str]) -> dict:
        return {"name": name, "outputs": [reference_stdout(correct, text) for text in inputs]}

    out = tmp_path / "data" / "sample.jsonl"
    assert write_sample(out, problems, row) == 2
    assert jsonl_rows(out) == [
        {"name": "double", "outputs": ["4\n", "42\n"]},
        {"name": "echo", "outputs": ["hi\n"]},
    ]


def test_a_failing_reference_stops_the_script_naming_the_input():
    with pytest.raises(
        SystemExit, match=r"(?s)reference solution failed on '0\\n': .*ZeroDivision"
    ):
        reference_stdout("print(1 // int(input()))", "0\n")
