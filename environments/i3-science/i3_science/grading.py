"""Grading for i3-science: rules and math-verify first, an optional LLM judge second.

The reward is one function, ``correct_answer`` (weight 1): 1.0 when the rule-based checker
(`i3_science.answers.check_answer`: option letters, numbers with units, text, and math-verify
for formulas) accepts the final ``\\boxed{}`` answer, or, with the judge enabled, when the rules
did not accept it (and did not settle it for good, as a wrong option letter does) and the judge
grades it "A". ``rule_score`` and ``judge_score`` are weight-0 metrics of the same grading.
"""

from __future__ import annotations

from typing import Any

import verifiers as vf
from verifiers.parsers.parser import content_text
from verifiers.utils.process_pool import WorkerTimeoutError
from verifiers.utils.shared import SharedTasks

from .answers import check_answer

__all__ = ["JUDGE_PROMPT", "HybridScienceRubric", "parse_verdict"]

GRADE_KEY = "i3_science_grade"
KIND_KEY = "answer_kind"
VERDICT_KEY = "judge_verdict"

JUDGE_PROMPT = """You check a candidate's final answer to a science question against the \
reference answer. The reference answer is correct; do not solve the question again and do not \
grade the reasoning, only whether the final answer states the same result.

Grades:
A: CORRECT. The candidate's answer means the same as the reference answer: the same quantity \
(in the same or an equivalent unit, converted correctly, and agreeing to the precision the \
reference is given in), an equivalent formula or expression, the same option of a multiple \
choice question (by its letter or its exact text), or the same term, name or compound.
B: INCORRECT. The answer differs from the reference answer, uses a wrong or missing conversion \
between units, answers something else, is only partly right, or lists several answers that \
are not all correct.
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


class HybridScienceRubric(vf.Rubric):
    """``correct_answer`` = rule-based science checking, with an optional LLM-judge fallback.

    * The answer is what ``parser`` returns: the last ``\\boxed{}`` after the reasoning, or ""
      (no box, unclosed ``<think>``). No answer, or one longer than ``max_answer_chars``,
      scores 0 and is never shown to the judge.
    * `check_answer` runs in the process pool of a `vf.MathRubric` (math-verify's
      per-operation timeout inside, a hard kill outside); a timeout scores 0
      (``state["math_verify_timeout"] = True``). How the gold answer was read goes to
      ``state["answer_kind"]``.
    * ``judge`` (a `vf.JudgeRubric` whose parser gives the boxed answer) is asked about answers
      the rules did not accept, except a multiple-choice letter, which settles the grade.
      Only a strictly parsed "A" scores 1; a malformed reply scores 0
      (``state["judge_verdict"] = None``); an unreachable judge raises `vf.JudgeError` (an
      infra error, reward NaN), never a silent 0.
    """

    def __init__(
        self,
        parser: vf.Parser,
        max_answer_chars: int = 500,
        math_verify_timeout: float = 5.0,
        math_verify_workers: int | None = None,
        numeric_rel_tol: float = 0.01,
        judge: vf.JudgeRubric | None = None,
    ) -> None:
        super().__init__(parser=parser)
        if max_answer_chars <= 0:
            raise vf.ConfigError(f"max_answer_chars must be positive, got {max_answer_chars}")
        if not 0.0 <= numeric_rel_tol < 1.0:
            raise vf.ConfigError(f"numeric_rel_tol must be in [0, 1), got {numeric_rel_tol}")
        self.max_answer_chars = max_answer_chars
        self.numeric_rel_tol = numeric_rel_tol
        self.math = vf.MathRubric(
            parser=parser,
            max_workers=math_verify_workers,
            timeout_seconds=math_verify_timeout,
            max_verify_chars=max_answer_chars,
        )
        self.judge_rubric = judge
        self._grading: SharedTasks[dict[str, float]] = SharedTasks()
        self.add_reward_func(self.correct_answer, 1.0)
        self.add_metric(self.rule_score)
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
        grade = {"rules": 0.0, "judge": 0.0}
        response = self.parser.parse_answer(completion) or ""
        gold = "" if answer is None else str(answer).strip()
        if response and gold and len(response) <= self.max_answer_chars:
            question = _question_text(prompt)
            math = self.math
            try:
                score, timed_out, kind, final = await math.pool.run(
                    check_answer,
                    gold,
                    response,
                    question,
                    math.signal_timeout,
                    self.numeric_rel_tol,
                    timeout=math.hard_timeout_seconds,
                )
            except WorkerTimeoutError:
                score, timed_out, kind, final = 0.0, True, "timeout", False
            grade["rules"] = score
            if state is not None:
                state[KIND_KEY] = kind
                if timed_out:
                    state["math_verify_timeout"] = True
            if timed_out:
                math.timeouts += 1
            if score != 1.0 and not final and self.judge_rubric is not None:
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
        """1.0 iff the rules accept the boxed answer or the judge grades it A."""
        grade = await self.grade(prompt, completion, answer, state)
        return max(grade["rules"], grade["judge"])

    async def rule_score(self, prompt, completion, answer, state) -> float:
        """1.0 iff the rule-based checker (letters, quantities, text, math-verify) accepts it."""
        return (await self.grade(prompt, completion, answer, state))["rules"]

    async def judge_score(self, prompt, completion, answer, state) -> float:
        """1.0 iff the judge was asked (the rules did not accept the answer) and graded it A."""
        return (await self.grade(prompt, completion, answer, state))["judge"]

    async def teardown(self) -> None:
        await self.math.teardown()
        if self.judge_rubric is not None:
            await self.judge_rubric.teardown()
        await super().teardown()


def _question_text(prompt: Any) -> str:
    """Text of the prompt's last user message (where lettered options are listed)."""
    if isinstance(prompt, str):
        return prompt
    users = [m for m in prompt or [] if isinstance(m, dict) and m.get("role") == "user"]
    return content_text(users[-1]) if users else ""
