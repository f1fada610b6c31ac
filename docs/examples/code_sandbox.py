"""Tutorial: a code environment — the model's program runs against tests in a sandbox."""

import json

from datasets import Dataset

import verifiers as vf

PROBLEMS = [
    {
        "question": "Read two integers from stdin and print their sum.",
        "tests": [{"input": "1 2\n", "output": "3\n"}, {"input": "-5 5\n", "output": "0\n"}],
    },
    {
        "question": "Write a function `double(x)` that returns twice its argument.",
        "tests": {"fn_name": "double", "inputs": [[2], [-4]], "outputs": [4, -8]},
    },
]


def load_environment(timeout_per_test: float = 2.0, **kwargs) -> vf.Environment:
    rows = [
        {"question": p["question"], "info": json.dumps({"tests": p["tests"]})} for p in PROBLEMS
    ]
    # Each rollout gets a fresh local sandbox from a warm pool (no network, private files,
    # memory/pids/CPU limits); every test runs as its own command with its own timeout.
    return vf.CodeEnv(
        dataset=Dataset.from_list(rows),
        timeout_per_test=timeout_per_test,
        pass_rate_weight=0.0,  # reward: 1.0 only when every test passes
        **kwargs,
    )
