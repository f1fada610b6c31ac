"""Rules first, an LLM judge second: the hybrid grading of RLVR math and science environments.

A rule-based checker (math-verify, unit-aware number comparison, option letters) is exact and
cheap but rejects right answers written in ways it does not know; a judge model accepts those
but costs a request. Asking the judge only about what the rules did not accept keeps most of the
rules' precision and cost while recovering their false negatives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from verifiers.errors import ConfigError
from verifiers.rubrics.judge_rubric import JudgeRubric
from verifiers.rubrics.rubric import Rubric
from verifiers.utils.answers import COMPASS_VERIFIER_LABELS, parse_grade
from verifiers.utils.environment_arguments import judge_from_arguments
from verifiers.utils.judge_endpoint import judge_endpoint
from verifiers.utils.published_prompts import PromptSource, resolve_prompt
from verifiers.utils.shared import SharedTasks

__all__ = ["COMPASS_VERIFIER_COT", "JudgeFallbackRubric"]

#: CompassVerifier's chain-of-thought grading prompt (``CV_COT_PROMPT`` of ``src/prompts.py`` in
#: open-compass/CompassVerifier, pinned to a commit so a cached copy cannot go stale), the A/B/C
#: format this rubric reads, as a published source: ``vf.resolve_prompt(..., "official",
#: [COMPASS_VERIFIER_COT])`` loads it at run time with its placeholders renamed to the judge's
#: ``{question}``, ``{answer}`` and ``{response}``. Its replies end ``\\boxed{X} - LABEL``.
COMPASS_VERIFIER_COT = PromptSource(
    url=(
        "https://raw.githubusercontent.com/open-compass/CompassVerifier/"
        "c5d6700ae5a820ed1232c847a57e7060d130b7df/src/prompts.py"
    ),
    name="CV_COT_PROMPT",
    placeholders={"gold_answer": "answer", "llm_response": "response"},
)

VERDICT_KEY = "judge_verdict"


class JudgeFallbackRubric(Rubric):
    """``correct_answer`` (weight 1): 1.0 when `check` accepts the answer, or, with a judge,
    when `check` did not accept it (and did not settle the grade) and the judge grades it "A".

    * The answer is what ``parser.parse_answer`` returns. No answer, or one longer than
      ``max_answer_chars``, scores 0 and is never checked nor shown to the judge.
    * Subclasses implement `check`; it returns the rules' score and whether that score is
      final (a wrong option letter needs no judge).
    * ``judge`` (a `JudgeRubric`) must end its reply with ``\\boxed{A|B|C}``; the grade is read
      strictly by `parse_grade` into ``state["judge_verdict"]`` (None: malformed, scores 0);
      a label naming the same grade may follow the box, as CompassVerifier's prompts ask
      (``\\boxed{A} - CORRECT``; `grade_labels`).
      An unreachable judge raises `JudgeError`: an infrastructure error (NaN), never a 0.
    * Grading runs once per rollout, shared by the reward and the weight-0 metrics
      ``rule_metric`` (the rules' score) and, with a judge, ``judge_score``; the grade is kept
      in ``state[grade_key]``.
    """

    rule_metric = "rule_score"
    grade_key = "rule_judge_grade"
    grade_labels = COMPASS_VERIFIER_LABELS

    def __init__(
        self,
        parser: Any,
        judge: JudgeRubric | None = None,
        max_answer_chars: int = 500,
        **kwargs: Any,
    ) -> None:
        super().__init__(parser=parser, **kwargs)
        if max_answer_chars <= 0:
            raise ConfigError(f"max_answer_chars must be positive, got {max_answer_chars}")
        self.max_answer_chars = max_answer_chars
        self.judge_rubric = judge
        self._grading: SharedTasks[dict[str, float]] = SharedTasks()
        self.add_reward_func(self.correct_answer, 1.0)
        self.add_metric(self._named_metric(self.rule_metric, "rules"))
        if judge is not None:
            self.add_metric(self._named_metric("judge_score", "judge"))

    @staticmethod
    def build_judge(
        parser: Any,
        *,
        model: str | None,
        prompt: Any,
        default_prompt: str,
        official: Sequence[PromptSource] = (COMPASS_VERIFIER_COT,),
        base_url: str | None = None,
        api_key_var: str | None = None,
        sampling_args: dict[str, Any] | None = None,
        timeout: float | None = None,
        max_concurrent: int | None = None,
    ) -> JudgeRubric | None:
        """The ``judge`` of this rubric from an environment's ``judge_*`` arguments.

        ``model`` None turns the judge off (None is returned); then naming an endpoint or a
        prompt other than ``default_prompt`` is a `ConfigError`, not silently ignored.
        ``prompt`` is resolved by `resolve_prompt` (``default_prompt`` or None: the
        environment's own; ``"official"``: ``official``, CompassVerifier's by default; a source
        or a template) and must hold ``{answer}`` and ``{response}``; the endpoint follows
        `judge_endpoint` (no key variable: the key "EMPTY").
        """
        if model is None:
            if base_url is not None or api_key_var is not None:
                raise ConfigError("judge_base_url / judge_api_key_var need judge_model")
            if prompt != default_prompt:
                raise ConfigError("judge_prompt needs judge_model (the judge is off)")
            return None
        template = resolve_prompt(
            prompt,
            default_prompt,
            list(official),
            argument="judge_prompt",
            required=("answer", "response"),
        )
        named = {
            "judge_model": model,
            "judge_sampling_args": sampling_args,
            "judge_timeout": timeout,
            "judge_max_concurrent": max_concurrent,
        }
        endpoint = judge_endpoint(base_url, api_key_var)
        return judge_from_arguments(named, parser, endpoint=endpoint, prompt=template)

    async def check(
        self, prompt: Any, completion: Any, answer: Any, response: str, state: Any
    ) -> tuple[float, bool]:
        """The rules' score for ``response`` (the parsed answer) and whether it is final."""
        raise NotImplementedError

    # -- one grading per rollout, shared by the reward and the metrics ----------------------
    async def grade(self, prompt: Any, completion: Any, answer: Any, state: Any) -> dict:
        """``{"rules": score, "judge": score}`` for this rollout, computed once."""
        if state is None:
            return await self._grade(prompt, completion, answer, None)
        done = state.get(self.grade_key)
        if done is not None:
            return done
        return await self._grading.run(
            id(state), lambda: self._grade(prompt, completion, answer, state)
        )

    async def _grade(self, prompt: Any, completion: Any, answer: Any, state: Any) -> dict:
        grade = {"rules": 0.0, "judge": 0.0}
        response = self.parser.parse_answer(completion) or ""
        if response and len(response) <= self.max_answer_chars:
            grade["rules"], final = await self.check(prompt, completion, answer, response, state)
            if grade["rules"] != 1.0 and not final and self.judge_rubric is not None:
                reply = await self.judge_rubric.judge(prompt, completion, answer, state)
                verdict = parse_grade(reply, labels=self.grade_labels)
                if state is not None:
                    state[VERDICT_KEY] = verdict
                grade["judge"] = 1.0 if verdict == "A" else 0.0
        if state is not None:
            state[self.grade_key] = grade
        return grade

    # -- reward and metrics ---------------------------------------------------------------
    async def correct_answer(self, prompt: Any, completion: Any, answer: Any, state: Any) -> float:
        """1.0 iff the rules accept the answer or the judge grades it A."""
        grade = await self.grade(prompt, completion, answer, state)
        return max(grade["rules"], grade["judge"])

    def _named_metric(self, name: str, part: str) -> Any:
        async def metric(prompt: Any, completion: Any, answer: Any, state: Any) -> float:
            return (await self.grade(prompt, completion, answer, state))[part]

        metric.__name__ = metric.__qualname__ = name
        return metric

    async def teardown(self) -> None:
        if self.judge_rubric is not None:
            await self.judge_rubric.teardown()
        await super().teardown()
