"""Regenerate i3_code/data/sample.jsonl from scripts/problems.toml: self-written problems in the
INTELLECT-3-RL `code` layout (`question`, `info` as a JSON string whose `tests` is itself a JSON
string, the difficulty column). Expected outputs come from running each problem's correct
solution here; every problem also carries a wrong solution (in `info["solutions"]`, which the
environment never shows the model) so the tests can check both verdicts.

    uv run python environments/i3-code/scripts/make_sample.py
"""

from __future__ import annotations

import json
from pathlib import Path

from verifiers.testing import reference_stdout, write_sample

OUT = Path(__file__).resolve().parents[1] / "i3_code" / "data" / "sample.jsonl"
PROBLEM_FILE = Path(__file__).with_name("problems.toml")


def call_outputs(code: str, fn: str, inputs: list[list]) -> list:
    ns: dict = {}
    exec(code, ns)  # our own reference solutions, at generation time only
    target = ns["Solution"]() if "Solution" in ns else None
    f = getattr(target, fn) if target is not None else ns[fn]
    outs = []
    for args in inputs:
        value = f(*json.loads(json.dumps(args)))
        outs.append(json.loads(json.dumps(value)))
    return outs


def sample_row(
    question, correct, wrong, inputs, fn=None, source="self-written", rate=0.5, as_lines=False
):
    if fn is None:
        outputs = [reference_stdout(correct, text) for text in inputs]
        stored_inputs = inputs
    else:
        outputs = call_outputs(correct, fn, inputs)
        # function-call inputs: a list of positional arguments, or (as_lines) one JSON
        # literal per line, both forms appear in the real data
        stored_inputs = (
            ["\n".join(json.dumps(a) for a in args) for args in inputs] if as_lines else inputs
        )
    tests = {"inputs": stored_inputs, "outputs": outputs, "fn_name": fn}
    info = {
        "tests": json.dumps(tests),
        "source": source,
        "solutions": {"correct": correct, "wrong": wrong},
    }
    return {"question": question, "info": json.dumps(info), "avg@8_qwen3_4b_instruct_2507": rate}


if __name__ == "__main__":
    print(f"wrote {write_sample(OUT, PROBLEM_FILE, sample_row)} problems to {OUT}")
