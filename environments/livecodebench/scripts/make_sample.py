"""Regenerate livecodebench/data/sample.jsonl from scripts/problems.toml: self-written problems
(not benchmark items) in the `code_generation_lite` row layout, plus the `version` column the
loader adds (the release file a row comes from). Expected outputs come from running each problem's correct solution here; some
rows store their private tests in the benchmark's compressed form (base64(zlib(pickle(JSON))))
so the decoder is exercised. Each row's `metadata` also carries a correct and a wrong solution
for the tests (the environment never shows them to the model).

    uv run python environments/livecodebench/scripts/make_sample.py
"""

from __future__ import annotations

import json
from pathlib import Path

from livecodebench import encode_private_tests

from verifiers.testing import reference_stdout, write_sample

OUT = Path(__file__).resolve().parents[1] / "livecodebench" / "data" / "sample.jsonl"
PROBLEM_FILE = Path(__file__).with_name("problems.toml")


def run_call(code: str, fn: str, text: str) -> str:
    ns: dict = {}
    exec(code, ns)  # our own reference solutions, at generation time only
    args = [json.loads(line) for line in text.splitlines()]
    return json.dumps(getattr(ns["Solution"](), fn)(*args))


def sample_row(
    qid, title, platform, day, version, difficulty, content, correct, wrong, inputs,
    n_public=2, fn=None, starter="", compressed=False,
):  # fmt: skip
    tests = []
    for text in inputs:
        out = run_call(correct, fn, text) if fn else reference_stdout(correct, text)
        tests.append({"input": text, "output": out, "testtype": "functional" if fn else "stdin"})
    public, private = tests[:n_public], tests[n_public:]
    meta = {"solutions": {"correct": correct, "wrong": wrong}}
    if fn:
        meta["func_name"] = fn
    return {
        "question_title": title,
        "question_content": content,
        "platform": platform,
        "question_id": qid,
        "contest_id": qid.rsplit("_", 1)[0],
        "contest_date": f"{day}T00:00:00",
        "starter_code": starter,
        "difficulty": difficulty,
        "public_test_cases": json.dumps(public),
        "private_test_cases": encode_private_tests(private) if compressed else json.dumps(private),
        "metadata": json.dumps(meta),
        "version": version,
    }


if __name__ == "__main__":
    print(f"wrote {write_sample(OUT, PROBLEM_FILE, sample_row)} problems to {OUT}")
