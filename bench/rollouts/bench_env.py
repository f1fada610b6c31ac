"""The benchmark environment, written once against the classic `verifiers` API.

Both sides of the comparison load this same file: our workspace `verifiers` and
`verifiers==0.3.1` from PyPI (whose classic API lives in `verifiers.legacy` and answers at
`import verifiers as vf`). Only names that exist in both are used: `vf.SingleTurnEnv`,
`vf.ToolEnv(tools=..., max_turns=...)`, `vf.Parser()`, `vf.Rubric(funcs=..., weights=...,
parser=...)`, `vf.extract_boxed_answer`.

Dataset: `num_examples` questions "What is A + B?" with A, B drawn from `random.Random(seed)`;
the answer column is the sum. The scripted server answers `The answer is \\boxed{A+B}.`
(off by one for a deterministic share of prompts when it runs with `--wrong-rate`), so the
mean reward is identical on both sides and checks that scoring ran.

`variant="tool"`: the same rows in a `vf.ToolEnv(tools=[add], max_turns=3)`. The scripted
server's default responder calls the first tool with the integers of the question
(`add(a=A, b=B)`) when the request has `tools` and the last message is the user's, and answers
`The answer is \\boxed{<tool result>}.` after the tool message: every rollout is 2 model turns
and 1 tool call (`--wrong-rate` does not apply on that path, so the mean reward is 1.0). 0.3.1
builds the tool schema with `openai-agents` (`agents.function_schema`), a declared dependency
of verifiers 0.3.1, so its venv already has it.
"""

from __future__ import annotations

import random

from datasets import Dataset

import verifiers as vf

SYSTEM_PROMPT = "Answer the question. Put the final answer in \\boxed{}."


def correct(completion, answer, parser, **kwargs) -> float:
    """1.0 when the last `\\boxed{...}` of the reply equals the gold answer."""
    text = parser.parse_answer(completion) or ""
    return 1.0 if vf.extract_boxed_answer(text) == str(answer) else 0.0


def make_rows(num_examples: int, seed: int = 0) -> list[dict[str, str]]:
    rng = random.Random(seed)
    rows = []
    for _ in range(num_examples):
        a, b = rng.randint(10, 999), rng.randint(10, 999)
        rows.append({"question": f"What is {a} + {b}?", "answer": str(a + b)})
    return rows


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first integer.
        b: The second integer.

    Returns:
        The sum a + b.
    """
    return a + b


TOOL_SYSTEM_PROMPT = "Use the add tool to compute the sum, then put the final answer in \\boxed{}."


def load_environment(num_examples: int = 2000, seed: int = 0, variant: str = "single", **kwargs):
    parser = vf.Parser()  # identity: parse_answer gives the last assistant text
    rubric = vf.Rubric(funcs=[correct], weights=[1.0], parser=parser)
    if variant == "tool":
        return vf.ToolEnv(
            tools=[add],
            dataset=Dataset.from_list(make_rows(num_examples, seed)),
            system_prompt=TOOL_SYSTEM_PROMPT,
            parser=parser,
            rubric=rubric,
            max_turns=kwargs.pop("max_turns", 3),
            **kwargs,
        )
    if variant != "single":
        raise ValueError(f"unknown variant {variant!r} (single, tool)")
    return vf.SingleTurnEnv(
        dataset=Dataset.from_list(make_rows(num_examples, seed)),
        system_prompt=SYSTEM_PROMPT,
        parser=parser,
        rubric=rubric,
        **kwargs,
    )
