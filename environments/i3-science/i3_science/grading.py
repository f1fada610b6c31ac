"""Grading for i3-science: rules and math-verify first, an optional LLM judge second.

The reward is one function, ``correct_answer`` (weight 1): 1.0 when the rule-based checker
(`i3_science.answers.check_answer`: option letters and words here; numbers, units and formulas
by the SDK's math-verify grader with its exact layer) accepts the final ``\\boxed{}`` answer, or, with the judge enabled, when the rules
did not accept it (and did not settle it for good, as a wrong option letter does) and the judge
grades it "A". ``rule_score`` and ``judge_score`` are weight-0 metrics of the same grading.
"""

from __future__ import annotations

from typing import Any

import verifiers as vf
from verifiers import WorkerTimeoutError, content_text

from .answers import check_answer

__all__ = [
    "COMPASS_VERIFIER_COT",
    "JUDGE_PROMPT",
    "HybridScienceRubric",
    "parse_verdict",
]

GRADE_KEY = "i3_science_grade"
KIND_KEY = "answer_kind"

JUDGE_PROMPT = vf.grade_judge_prompt(
    subject="a science question",
    item="question",
    correct="The candidate's answer means the same as the reference answer: the same quantity \
(in the same or an equivalent unit, converted correctly, and agreeing to the precision the \
reference is given in), an equivalent formula or expression, the same option of a multiple \
choice question (by its letter or its exact text), or the same term, name or compound.",
    incorrect="The answer differs from the reference answer, uses a wrong or missing conversion \
between units, answers something else, is only partly right, or lists several answers that \
are not all correct.",
)

#: Where ``judge_prompt="official"`` loads the prompt upstream judged with: CompassVerifier's
#: chain-of-thought grading prompt (the SDK's `vf.COMPASS_VERIFIER_COT`); its replies end
#: ``\\boxed{X} - LABEL``, which `vf.JudgeFallbackRubric` reads.
COMPASS_VERIFIER_COT = vf.COMPASS_VERIFIER_COT

# The judge must end with `\boxed{A|B|C}`; anything else is no verdict (see `vf.parse_grade`).
parse_verdict = vf.parse_grade


class HybridScienceRubric(vf.MathVerifyJudgeRubric):
    """``correct_answer`` = rule-based science checking, with an optional LLM-judge fallback
    (`vf.JudgeFallbackRubric`: graded once per rollout; only a strictly parsed judge grade "A"
    scores 1; an unreachable judge is an infra error, NaN, never a silent 0).

    * The answer is what ``parser`` returns: the last ``\\boxed{}`` after the reasoning, or ""
      (no box, unclosed ``<think>``). No answer, or one longer than ``max_answer_chars``,
      scores 0 and is never shown to the judge.
    * `check_answer` runs in the process pool of a `vf.MathRubric` (math-verify's
      per-operation timeout inside, a hard kill outside); a timeout scores 0
      (``state["math_verify_timeout"] = True``). How the gold answer was read goes to
      ``state["answer_kind"]``.
    * ``judge`` (a `vf.JudgeRubric` whose parser gives the boxed answer) is asked about answers
      the rules did not accept, except a multiple-choice letter, which settles the grade.
    """

    grade_key = GRADE_KEY

    def __init__(
        self,
        parser: vf.Parser,
        max_answer_chars: int = 500,
        math_verify_timeout: float = 5.0,
        math_verify_workers: int | None = None,
        numeric_rel_tol: float = 0.01,
        judge: vf.JudgeRubric | None = None,
    ) -> None:
        # ours takes the tolerance before the judge (its own default); the base, after
        super().__init__(
            parser,
            max_answer_chars=max_answer_chars,
            math_verify_timeout=math_verify_timeout,
            math_verify_workers=math_verify_workers,
            judge=judge,
            numeric_rel_tol=numeric_rel_tol,
        )

    def check_args(self, prompt: Any, answer: Any, response: str) -> tuple | None:
        """The arguments of `check_answer` for a rollout's boxed ``response`` (None without a
        gold answer); public so that a table can be graded in-process as the pool grades it."""
        gold = "" if answer is None else str(answer).strip()
        if not gold:
            return None
        question = _question_text(prompt)
        return gold, response, question, self.math.signal_timeout, self.numeric_rel_tol

    async def check(
        self, prompt: Any, completion: Any, answer: Any, response: str, state: Any
    ) -> tuple[float, bool]:
        args = self.check_args(prompt, answer, response)
        if args is None:
            return 0.0, True  # nothing to compare with, and nothing to show a judge
        math = self.math
        try:
            score, timed_out, kind, final = await math.pool.run(
                check_answer, *args, timeout=math.hard_timeout_seconds
            )
        except WorkerTimeoutError:
            score, timed_out, kind, final = 0.0, True, "timeout", False
        if state is not None:
            state[KIND_KEY] = kind
            if timed_out:
                state["math_verify_timeout"] = True
        if timed_out:
            math.timeouts += 1
        return score, final


def _question_text(prompt: Any) -> str:
    """Text of the prompt's last user message (where lettered options are listed)."""
    if isinstance(prompt, str):
        return prompt
    users = [m for m in prompt or [] if isinstance(m, dict) and m.get("role") == "user"]
    return content_text(users[-1]) if users else ""
