"""`arithmetic`: a self-contained single-turn environment for demos and smoke tests.

Questions are generated from a seed (no download). The model must put its final answer in
`\\boxed{}`; the reward is exact match of that answer.
"""

from __future__ import annotations

import random
from typing import Any

import verifiers as vf

SYSTEM_PROMPT = "Solve the problem. Put only the final number in \\boxed{}."


def make_rows(num_examples: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    rows = []
    for _ in range(num_examples):
        a, b = rng.randint(10, 999), rng.randint(10, 999)
        op = rng.choice("+-*")
        result = {"+": a + b, "-": a - b, "*": a * b}[op]
        rows.append({"question": f"What is {a} {op} {b}?", "answer": str(result)})
    return rows


def load_environment(
    num_examples: int = 200, seed: int = 0, system_prompt: str = SYSTEM_PROMPT
) -> vf.Environment:
    from datasets import Dataset

    parser = vf.MaybeThinkParser(extract_fn=vf.extract_boxed_answer)

    def correct_answer(completion: vf.Messages, answer: str, **_: Any) -> float:
        return 1.0 if (parser.parse_answer(completion) or "").strip() == answer else 0.0

    def answered(completion: vf.Messages, **_: Any) -> float:
        return 1.0 if parser.parse_answer(completion) else 0.0

    rubric = vf.Rubric(funcs=[correct_answer], parser=parser)
    rubric.add_metric(answered)
    return vf.SingleTurnEnv(
        dataset=Dataset.from_list(make_rows(num_examples, seed)),
        system_prompt=system_prompt,
        parser=parser,
        rubric=rubric,
    )
