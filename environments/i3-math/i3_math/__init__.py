"""i3-math: INTELLECT-3 style single-turn math with ``\\boxed{}`` answers.

The model gets one user message (an instruction, a blank line, the problem) and answers once.
Its final ``\\boxed{}`` answer is graded against the gold answer with math-verify; an optional
LLM judge grades what math-verify rejects. See README.md for the exact reward.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import verifiers as vf

from .grading import (
    COMPASS_VERIFIER_COT,
    JUDGE_PROMPT,
    HybridMathRubric,
    parse_verdict,
)

__all__ = [
    "COMPASS_VERIFIER_COT",
    "DEFAULT_DIFFICULTY_KEY",
    "INSTRUCTION_PROMPT",
    "JUDGE_PROMPT",
    "OFFICIAL_INSTRUCTION",
    "HybridMathRubric",
    "answer_parser",
    "load_environment",
    "parse_verdict",
    "prepare_dataset",
]

DATASET_NAME = "PrimeIntellect/INTELLECT-3-RL"
DEFAULT_DIFFICULTY_KEY = "avg@8_qwen3_4b_thinking_2507"
#: The instruction put before each problem, in our words; upstream's own line (the INTELLECT-3
#: prompt) is loaded at run time with ``instruction_prompt="official"`` (`OFFICIAL_INSTRUCTION`).
INSTRUCTION_PROMPT = (
    "Work out the math problem below step by step, then give the final answer inside \\boxed{}."
)
#: Where upstream's instruction is published: the INTELLECT-3 version of the environment.
OFFICIAL_INSTRUCTION = vf.JudgedBoxedTask.intellect3_instruction("i3_math")
SAMPLE = Path(__file__).parent / "data" / "sample.jsonl"


#: The final ``\\boxed{}`` answer after the reasoning, or "" when there is none.
answer_parser = vf.boxed_answer_parser


def prepare_dataset(dataset: Any, **options: Any) -> Any:
    """Validate rows, apply the pass-rate filter and build the environment's columns
    (`vf.JudgedBoxedTask.prepare_dataset`; by default our instruction and difficulty column)."""
    return _task().prepare_dataset(dataset, **options)


def load_environment(
    source: Any = "auto",
    dataset_name: str = DATASET_NAME,
    dataset_subset: str = "math",
    dataset_split: str = "train",
    dataset_shuffle: bool = False,
    seed: int = 42,
    difficulty_key: str | None = DEFAULT_DIFFICULTY_KEY,
    min_avg_reward: float = 0.0,
    max_avg_reward: float = 1.0,
    keep_unrated: bool = False,
    instruction_prompt: Any = None,
    system_prompt: str | None = None,
    max_answer_chars: int = 500,
    require_think_close: bool = False,
    math_verify_timeout: float = 5.0,
    math_verify_workers: int | None = None,
    numeric_rel_tol: float = 0.0,
    judge_model: str | None = None,
    judge_base_url: str | None = None,
    judge_api_key_var: str | None = None,
    judge_sampling_args: dict[str, Any] | None = None,
    judge_timeout: float = 1200.0,
    judge_max_concurrent: int = 256,
    judge_prompt: Any = JUDGE_PROMPT,
) -> vf.Environment:
    """Build the i3-math environment: `vf.JudgedBoxedTask.build` with i3-math's rows, words
    and rubric (its docstring and README.md describe every argument).

    Here ``instruction_prompt`` None is ours (`INSTRUCTION_PROMPT`) and ``"official"`` is
    upstream's INTELLECT-3 line (`OFFICIAL_INSTRUCTION`); ``judge_prompt`` defaults to ours
    (`JUDGE_PROMPT`) and ``"official"`` is CompassVerifier's chain-of-thought prompt
    (`COMPASS_VERIFIER_COT`), both fetched at load time and cached on disk. ``numeric_rel_tol``
    is the relative tolerance within which a decimal answer matches a non-integer gold
    (default 0: only exactly, so 1.5707963 is not pi/2).
    """
    arguments = dict(locals())  # every argument, as given, to the builder
    return _task().build(**arguments)


def _task() -> vf.JudgedBoxedTask:
    # Built per call from the module's constants, so that a test pointing one of them at a
    # local copy is obeyed.
    return vf.JudgedBoxedTask(
        name="i3-math",
        dataset_name=DATASET_NAME,
        sample=SAMPLE,
        instruction=INSTRUCTION_PROMPT,
        official_instruction=OFFICIAL_INSTRUCTION,
        judge_prompt=JUDGE_PROMPT,
        rubric=HybridMathRubric,
        official_judge_prompts=[COMPASS_VERIFIER_COT],
        difficulty_key=DEFAULT_DIFFICULTY_KEY,
    )
