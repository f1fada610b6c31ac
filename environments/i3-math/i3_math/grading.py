"""Grading for i3-math: math-verify first (`vf.MathRubric`), an optional LLM judge second.

The reward is one function, ``correct_answer`` (weight 1): 1.0 when math-verify finds the final
``\\boxed{}`` answer equal to the gold answer, or, with the judge enabled, when math-verify
rejected it and the judge grades it "A" (correct). ``math_verify_score`` and ``judge_score``
are weight-0 metrics of the same grading (computed once per rollout and shared).
"""

from __future__ import annotations

from typing import Any

import verifiers as vf
from verifiers.utils.shared import SharedTasks

__all__ = ["JUDGE_PROMPT", "HybridMathRubric", "parse_verdict"]

GRADE_KEY = "i3_math_grade"
VERDICT_KEY = "judge_verdict"

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

# The judge must end with `\boxed{A|B|C}`; anything else is no verdict (see `vf.parse_grade`).
parse_verdict = vf.parse_grade


class HybridMathRubric(vf.Rubric):
    """``correct_answer`` = math-verify, with an optional LLM-judge fallback.

    * The answer is what ``parser`` returns: the last ``\\boxed{}`` after the reasoning, or ""
      (no box, unclosed ``<think>``). No answer, or one longer than ``max_answer_chars``,
      scores 0 and is never shown to the judge.
    * math-verify runs in `vf.MathRubric`'s process pool with its per-operation timeout and a
      hard kill; a timeout scores 0 (``state["math_verify_timeout"] = True``).
    * ``judge`` (a `vf.JudgeRubric` whose parser gives the boxed answer) is asked only about
      answers math-verify rejected. Its grade is parsed by `parse_verdict`; only "A" scores 1.
      A reply without a well-formed grade scores 0 (``state["judge_verdict"] = None``). A judge
      that cannot be reached raises `vf.JudgeError`: the rollout is an infra error (NaN), not 0.
    """

    def __init__(
        self,
        parser: vf.Parser,
        max_answer_chars: int = 500,
        math_verify_timeout: float = 5.0,
        math_verify_workers: int | None = None,
        judge: vf.JudgeRubric | None = None,
    ) -> None:
        super().__init__(parser=parser)
        if max_answer_chars <= 0:
            raise vf.ConfigError(f"max_answer_chars must be positive, got {max_answer_chars}")
        self.max_answer_chars = max_answer_chars
        self.math = vf.MathRubric(
            parser=parser,
            max_workers=math_verify_workers,
            timeout_seconds=math_verify_timeout,
            max_verify_chars=max_answer_chars,
        )
        self.judge_rubric = judge
        self._grading: SharedTasks[dict[str, float]] = SharedTasks()
        self.add_reward_func(self.correct_answer, 1.0)
        self.add_metric(self.math_verify_score)
        if judge is not None:
            self.add_metric(self.judge_score)

    # -- one grading per rollout, shared by the reward and the metrics ----------------------
    async def grade(self, prompt: Any, completion: Any, answer: Any, state: Any) -> dict:
        if state is None:
            return await self._grade(prompt, completion, answer, None)
        done = state.get(GRADE_KEY)
        if done is not None:
            return done
        return await self._grading.run(
            id(state), lambda: self._grade(prompt, completion, answer, state)
        )

    async def _grade(self, prompt: Any, completion: Any, answer: Any, state: Any) -> dict:
        grade = {"math_verify": 0.0, "judge": 0.0}
        response = self.parser.parse_answer(completion) or ""
        if response and len(response) <= self.max_answer_chars:
            grade["math_verify"] = await self.math.correct_answer(completion, answer, state)
            if grade["math_verify"] != 1.0 and self.judge_rubric is not None:
                reply = await self.judge_rubric.judge(prompt, completion, answer, state)
                verdict = parse_verdict(reply)
                if state is not None:
                    state[VERDICT_KEY] = verdict
                grade["judge"] = 1.0 if verdict == "A" else 0.0
        if state is not None:
            state[GRADE_KEY] = grade
        return grade

    # -- reward and metrics ---------------------------------------------------------------
    async def correct_answer(self, prompt, completion, answer, state) -> float:
        """1.0 iff math-verify accepts the boxed answer or the judge grades it A."""
        grade = await self.grade(prompt, completion, answer, state)
        return max(grade["math_verify"], grade["judge"])

    async def math_verify_score(self, prompt, completion, answer, state) -> float:
        """1.0 iff math-verify accepts the boxed answer."""
        return (await self.grade(prompt, completion, answer, state))["math_verify"]

    async def judge_score(self, prompt, completion, answer, state) -> float:
        """1.0 iff the judge was asked (math-verify rejected the answer) and graded it A."""
        return (await self.grade(prompt, completion, answer, state))["judge"]

    async def teardown(self) -> None:
        await self.math.teardown()
        if self.judge_rubric is not None:
            await self.judge_rubric.teardown()
        await super().teardown()
