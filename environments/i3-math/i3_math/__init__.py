"""i3-math: INTELLECT-3 style single-turn math with ``\\boxed{}`` answers.

The model gets one user message (an instruction, a blank line, the problem) and answers once.
Its final ``\\boxed{}`` answer is graded against the gold answer with math-verify; an optional
LLM judge grades what math-verify rejects. See README.md for the exact reward.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import verifiers as vf
from verifiers.rubrics.math_rubric import strict_boxed_answer

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
OFFICIAL_INSTRUCTION = vf.PromptSource(
    url="https://raw.githubusercontent.com/PrimeIntellect-ai/research-environments/"
    "b9cb04acef3b5608a0e05883af7f329c0c69dbaa/environments/i3_math/i3_math.py",
    name="INSTRUCTION_PROMPT",
)
SAMPLE = Path(__file__).parent / "data" / "sample.jsonl"


def answer_parser(require_think_close: bool = False) -> vf.Parser:
    """The final ``\\boxed{}`` answer, or "" when there is none.

    Everything up to the last ``</think>`` is reasoning and ignored, so a completion that only
    contains ``</think>`` (the chat template put ``<think>`` in the prompt) is handled like one
    with both tags. A ``<think>`` left open means the reasoning never finished: no answer.
    With ``require_think_close`` a completion without ``</think>`` has no answer either (for a
    template that injects ``<think>``, where a truncated completion shows no tag at all).
    """
    if require_think_close:
        return vf.ThinkParser(extract_fn=strict_boxed_answer)
    return vf.MaybeThinkParser(extract_fn=strict_boxed_answer)


def prepare_dataset(
    dataset: Any,
    *,
    instruction_prompt: str = INSTRUCTION_PROMPT,
    difficulty_key: str | None = DEFAULT_DIFFICULTY_KEY,
    min_avg_reward: float = 0.0,
    max_avg_reward: float = 1.0,
    keep_unrated: bool = False,
    task: str = "i3-math",
    what: str = "dataset",
) -> Any:
    """Validate rows, apply the pass-rate filter and build the environment's columns.

    Returns a ``datasets.Dataset`` with ``question`` (instruction + blank line + problem),
    ``answer``, ``task`` and ``info`` (JSON: the source row index and its pass rate); see
    `vf.prepare_qa_dataset` for the errors (unusable rows are named, a filter on a missing
    column or one that keeps nothing is refused).
    """
    pass_rate = vf.PassRateFilter(difficulty_key, min_avg_reward, max_avg_reward, keep_unrated)
    return vf.prepare_qa_dataset(
        dataset, instruction=instruction_prompt, pass_rate=pass_rate, task=task, what=what
    )


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
    """Build the i3-math environment.

    Args:
        source: "auto" (the hub dataset when reachable, else the bundled sample), "hub",
            "sample", a local file/folder path, a list of row dicts or a ``datasets.Dataset``.
            Rows need ``question`` and ``answer``; ``info`` and the difficulty column are optional.
        dataset_name / dataset_subset / dataset_split: the hub dataset, config and split.
        dataset_shuffle / seed: shuffle the rows (after filtering) with this seed.
        difficulty_key: the pass-rate column used by the difficulty filter.
        min_avg_reward / max_avg_reward: keep rows whose pass rate is in [min, max] (inclusive).
            The default [0, 1] filters nothing. Asking for a narrower range on a dataset without
            ``difficulty_key`` is an error.
        keep_unrated: with a filter active, keep rows whose pass rate is empty (default: drop).
        instruction_prompt: put before each problem (then a blank line). None: ours
            (`INSTRUCTION_PROMPT`); ``"official"``: upstream's INTELLECT-3 line, loaded at
            load time and cached on disk (`OFFICIAL_INSTRUCTION`); other text: used as is.
        system_prompt: an optional system message (none by default).
        max_answer_chars: a boxed answer longer than this scores 0 (not graded, not judged).
        require_think_close: a completion without ``</think>`` has no answer (use with chat
            templates that open ``<think>`` in the prompt and return raw completions).
        math_verify_timeout: math-verify's per-operation timeout in seconds.
        math_verify_workers: grading processes (default: the machine's CPU count).
        numeric_rel_tol: relative tolerance within which a decimal answer matches a
            non-integer gold (default 0: only exactly, so 1.5707963 is not pi/2).
        judge_model: enable the LLM-judge fallback with this model (default None: off).
        judge_base_url: the judge's OpenAI-compatible endpoint (default: ``OPENAI_BASE_URL``).
        judge_api_key_var: environment variable holding the judge's API key (must be set when
            given; None: the key "EMPTY", as upstream, for a local judge without one).
        judge_sampling_args: sampling arguments for judge requests.
        judge_timeout / judge_max_concurrent: per-request timeout (s) and requests in flight.
        judge_prompt: the judge's template (``{question}``, ``{answer}``, ``{response}``);
            default ours (`JUDGE_PROMPT`); ``"official"``: upstream's, CompassVerifier's
            chain-of-thought prompt, fetched at load time (`COMPASS_VERIFIER_COT`, cached on
            disk); a `vf.PromptSource` dict loads another published text.
    """
    dataset = vf.load_dataset_source(
        dataset_name,
        source=source,
        sample=SAMPLE,
        split=dataset_split,
        config=dataset_subset,
        required_columns=["question", "answer"],
    )
    instruction = vf.resolve_prompt(
        instruction_prompt,
        INSTRUCTION_PROMPT,
        [OFFICIAL_INSTRUCTION],
        argument="instruction_prompt",
    )
    dataset = prepare_dataset(
        dataset,
        instruction_prompt=instruction,
        difficulty_key=difficulty_key,
        min_avg_reward=min_avg_reward,
        max_avg_reward=max_avg_reward,
        keep_unrated=keep_unrated,
        what=_describe(source, dataset_name),
    )
    if dataset_shuffle:
        dataset = dataset.shuffle(seed=seed)
    parser = answer_parser(require_think_close)
    rubric = HybridMathRubric(
        parser=parser,
        max_answer_chars=max_answer_chars,
        math_verify_timeout=math_verify_timeout,
        math_verify_workers=math_verify_workers,
        numeric_rel_tol=numeric_rel_tol,
        judge=vf.JudgeFallbackRubric.build_judge(
            parser,
            model=judge_model,
            prompt=judge_prompt,
            default_prompt=JUDGE_PROMPT,
            official=[COMPASS_VERIFIER_COT],  # looked up here: tests point it at a local copy
            base_url=judge_base_url,
            api_key_var=judge_api_key_var,
            sampling_args=judge_sampling_args,
            timeout=judge_timeout,
            max_concurrent=judge_max_concurrent,
        ),
    )
    return vf.SingleTurnEnv(
        dataset=dataset, system_prompt=system_prompt, parser=parser, rubric=rubric
    )


def _describe(source: Any, dataset_name: str) -> str:
    if isinstance(source, str | Path) and str(source) not in ("auto", "hub", "sample"):
        return f"dataset {source}"
    if source == "sample":
        return f"sample {SAMPLE.name}"
    return "dataset" if not isinstance(source, str) else f"dataset {dataset_name}"
