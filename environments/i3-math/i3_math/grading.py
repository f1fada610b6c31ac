"""Grading for i3-math: math-verify with the SDK's exact layer first (`vf.MathRubric`), an
optional LLM judge second.

The reward is one function, ``correct_answer`` (weight 1): 1.0 when math-verify finds the final
``\\boxed{}`` answer equal to the gold answer, or, with the judge enabled, when math-verify
rejected it and the judge grades it "A" (correct). ``math_verify_score`` and ``judge_score``
are weight-0 metrics of the same grading (computed once per rollout and shared).
"""

from __future__ import annotations

import verifiers as vf

__all__ = [
    "COMPASS_VERIFIER_COT",
    "JUDGE_PROMPT",
    "HybridMathRubric",
    "parse_verdict",
]

GRADE_KEY = "i3_math_grade"

JUDGE_PROMPT = """You check a candidate's final answer to a math problem against the \
reference answer. The reference answer is correct; do not solve the problem again and do not \
grade the reasoning, only whether the final answer states the same result.

Grades:
A: CORRECT. The candidate's answer is mathematically the same as the reference answer, \
perhaps written another way: a different but equivalent expression, simplified or not, \
another notation for the same number, set, interval or choice, or a decimal that agrees with \
the reference to the precision the reference is given in.
B: INCORRECT. The answer differs from the reference answer, answers something else, is only \
partly right, or lists several answers that are not all correct.
C: INVALID. The answer is empty, cut off, repeats itself, refuses, or never commits to one \
result.

Question:
<<<
{question}
>>>

Reference answer:
<<<
{answer}
>>>

Candidate's final answer:
<<<
{response}
>>>

Think it through briefly, then end your reply with exactly one line of the form
Final Judgment: \\boxed{X}
where X is A, B or C."""

#: Where ``judge_prompt="official"`` loads the prompt upstream judged with: CompassVerifier's
#: chain-of-thought grading prompt (the SDK's `vf.COMPASS_VERIFIER_COT`); its replies end
#: ``\\boxed{X} - LABEL``, which `vf.JudgeFallbackRubric` reads.
COMPASS_VERIFIER_COT = vf.COMPASS_VERIFIER_COT

# The judge must end with `\boxed{A|B|C}`; anything else is no verdict (see `vf.parse_grade`).
parse_verdict = vf.parse_grade


class HybridMathRubric(vf.JudgeFallbackRubric):
    """``correct_answer`` = math-verify, with an optional LLM-judge fallback
    (`vf.JudgeFallbackRubric`: graded once per rollout; only a strictly parsed judge grade "A"
    scores 1; an unreachable judge is an infra error, NaN, not 0).

    * The answer is what ``parser`` returns: the last ``\\boxed{}`` after the reasoning, or ""
      (no box, unclosed ``<think>``). No answer, or one longer than ``max_answer_chars``,
      scores 0 and is never shown to the judge.
    * math-verify runs in `vf.MathRubric`'s process pool with its per-operation timeout and a
      hard kill; a timeout scores 0 (``state["math_verify_timeout"] = True``).
    * ``judge`` (a `vf.JudgeRubric` whose parser gives the boxed answer) is asked only about
      answers math-verify rejected.
    """

    rule_metric = "math_verify_score"
    grade_key = GRADE_KEY

    def __init__(
        self,
        parser: vf.Parser,
        max_answer_chars: int = 500,
        math_verify_timeout: float = 5.0,
        math_verify_workers: int | None = None,
        judge: vf.JudgeRubric | None = None,
        numeric_rel_tol: float = 0.0,
    ) -> None:
        super().__init__(parser=parser, judge=judge, max_answer_chars=max_answer_chars)
        if not 0.0 <= numeric_rel_tol < 1.0:
            raise vf.ConfigError(f"numeric_rel_tol must be in [0, 1), got {numeric_rel_tol}")
        self.math = vf.MathRubric(
            parser=parser,
            max_workers=math_verify_workers,
            timeout_seconds=math_verify_timeout,
            max_verify_chars=max_answer_chars,
            numeric_rel_tol=numeric_rel_tol,
        )

    async def check(self, prompt, completion, answer, response, state) -> tuple[float, bool]:
        return await self.math.correct_answer(completion, answer, state, prompt), False

    async def teardown(self) -> None:
        await self.math.teardown()
        await super().teardown()
