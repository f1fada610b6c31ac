"""Judge-backed single-turn environments with ``\\boxed{}`` answers (the INTELLECT-3 math and
science shape), built once here instead of in every environment.

A `JudgedBoxedTask` names what differs between such environments (dataset, instruction, judge
prompt, rubric); ``task.build(...)`` loads the rows, filters them by pass rate, and returns a
`SingleTurnEnv` whose rubric grades the final boxed answer by rules (math-verify in a process
pool, see `MathVerifyJudgeRubric`) and, optionally, an LLM judge for what the rules reject.
An environment keeps its data in a TOML file (`JudgedBoxedTask.from_toml`) and gets its
``load_environment`` signature, written once here, from `JudgedBoxedTask.loader`.
"""

from __future__ import annotations

import enum
import functools
import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from verifiers.envs.singleturn_env import SingleTurnEnv
from verifiers.errors import ConfigError
from verifiers.parsers import MaybeThinkParser, Parser, ThinkParser
from verifiers.pass_rate import PassRateFilter
from verifiers.rubrics import COMPASS_VERIFIER_COT, JudgeFallbackRubric, JudgeRubric, MathRubric
from verifiers.rubrics.math_rubric import strict_boxed_answer
from verifiers.utils.published_prompts import PromptSource

__all__ = [
    "JudgedBoxedTask",
    "MathVerifyJudgeRubric",
    "boxed_answer_parser",
    "grade_judge_prompt",
]


def grade_judge_prompt(*, subject: str, item: str, correct: str, incorrect: str) -> str:
    """A judge prompt grading a candidate's final answer A (correct), B (incorrect) or C
    (invalid) against the reference, ending ``Final Judgment: \\boxed{X}`` (read by
    `vf.parse_grade`). ``subject`` is what was asked ("a math problem"), ``item`` its noun
    ("problem"); ``correct`` and ``incorrect`` describe grades A and B after their labels.
    The template has ``{question}``, ``{answer}`` and ``{response}`` fields."""
    return f"""You check a candidate's final answer to {subject} against the \
reference answer. The reference answer is correct; do not solve the {item} again and do not \
grade the reasoning, only whether the final answer states the same result.

Grades:
A: CORRECT. {correct}
B: INCORRECT. {incorrect}
C: INVALID. The answer is empty, cut off, repeats itself, refuses, or never commits to one \
result.

Question:
<<<
{{question}}
>>>

Reference answer:
<<<
{{answer}}
>>>

Candidate's final answer:
<<<
{{response}}
>>>

Think it through briefly, then end your reply with exactly one line of the form
Final Judgment: \\boxed{{X}}
where X is A, B or C."""


def boxed_answer_parser(require_think_close: bool = False) -> Parser:
    """The final ``\\boxed{}`` answer after the reasoning, or "" when there is none.

    Everything up to the last ``</think>`` is reasoning and ignored, so a completion that only
    contains ``</think>`` (the chat template put ``<think>`` in the prompt) is handled like one
    with both tags. A ``<think>`` left open means the reasoning never finished: no answer.
    With ``require_think_close`` a completion without ``</think>`` has no answer either (for a
    template that injects ``<think>``, where a truncated completion shows no tag at all).
    """
    if require_think_close:
        return ThinkParser(extract_fn=strict_boxed_answer)
    return MaybeThinkParser(extract_fn=strict_boxed_answer)


class MathVerifyJudgeRubric(JudgeFallbackRubric):
    """``correct_answer`` = math-verify (with the SDK's exact layer), and an optional LLM-judge
    fallback (`JudgeFallbackRubric`: graded once per rollout; only a strictly parsed judge
    grade "A" scores 1; an unreachable judge is an infra error, NaN, not 0).

    * The answer is what ``parser`` returns; no answer, or one longer than
      ``max_answer_chars``, scores 0 and is never shown to the judge.
    * math-verify runs in ``self.math`` (a `MathRubric`: its process pool, per-operation
      timeout and hard kill); a timeout scores 0 (``state["math_verify_timeout"] = True``).
      Subclasses with other rules override `check` and may run them in ``self.math.pool``.
    """

    def __init__(
        self,
        parser: Parser,
        max_answer_chars: int = 500,
        math_verify_timeout: float = 5.0,
        math_verify_workers: int | None = None,
        judge: JudgeRubric | None = None,
        numeric_rel_tol: float = 0.0,
    ) -> None:
        super().__init__(parser=parser, judge=judge, max_answer_chars=max_answer_chars)
        if not 0.0 <= numeric_rel_tol < 1.0:
            raise ConfigError(f"numeric_rel_tol must be in [0, 1), got {numeric_rel_tol}")
        self.numeric_rel_tol = numeric_rel_tol
        self.math = MathRubric(
            parser=parser,
            max_workers=math_verify_workers,
            timeout_seconds=math_verify_timeout,
            max_verify_chars=max_answer_chars,
            numeric_rel_tol=numeric_rel_tol,
        )

    async def check(
        self, prompt: Any, completion: Any, answer: Any, response: str, state: Any
    ) -> tuple[float, bool]:
        return await self.math.correct_answer(completion, answer, state, prompt), False

    async def teardown(self) -> None:
        await self.math.teardown()
        await super().teardown()


#: INTELLECT-3's published environments (research-environments at the pinned commit), where
#: upstream's instruction lines are read from.
INTELLECT3_ENVIRONMENTS = (
    "https://raw.githubusercontent.com/PrimeIntellect-ai/research-environments/"
    "b9cb04acef3b5608a0e05883af7f329c0c69dbaa/environments"
)


#: The fields of a `JudgedBoxedTask.from_toml` file, each required, and its optional table.
_TOML_FIELDS = (
    "name",
    "dataset_name",
    "sample",
    "instruction",
    "difficulty_key",
    "intellect3_module",
)
_TOML_DEFAULTS_TABLE = "load_environment"

_Loader = TypeVar("_Loader", bound=Callable[..., Any])


class _Own(enum.Enum):
    """A `JudgedBoxedTask.prepare_dataset` argument left out: the task's own value (None is a
    value there: no difficulty column)."""

    VALUE = "the task's own"


@dataclass(frozen=True)
class JudgedBoxedTask:
    """What one judge-backed boxed-answer environment is: its rows, words and rubric.

    ``sample`` is the bundled offline sample (``source="sample"``); ``official_instruction``
    and ``official_judge_prompts`` are where ``"official"`` loads upstream's texts from;
    ``difficulty_key`` is the pass-rate column `prepare_dataset` filters on by default;
    ``defaults`` are the environment's own defaults of `build` arguments in its
    ``load_environment`` (`loader`), beyond the task's dataset, difficulty key and judge prompt."""

    name: str
    dataset_name: str
    sample: Path
    instruction: str
    official_instruction: PromptSource
    judge_prompt: str
    rubric: type[MathVerifyJudgeRubric]
    official_judge_prompts: list[PromptSource] = field(default_factory=list)
    difficulty_key: str | None = None
    defaults: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_toml(
        cls,
        path: Path,
        *,
        rubric: type[MathVerifyJudgeRubric],
        judge_prompt: str,
        official_judge_prompts: Sequence[PromptSource] = (COMPASS_VERIFIER_COT,),
    ) -> JudgedBoxedTask:
        """The task an environment's TOML file describes, with its rubric and judge prompt.

        The file holds ``name``, ``dataset_name``, ``sample`` (a path relative to the file),
        ``instruction``, ``difficulty_key`` (``false``: none) and ``intellect3_module`` (whose
        published ``INSTRUCTION_PROMPT`` ``"official"`` loads, `intellect3_instruction`), and
        optionally a ``[load_environment]`` table of `defaults`. ``official_judge_prompts``
        defaults to CompassVerifier's (`vf.COMPASS_VERIFIER_COT`). A missing or unknown key is
        a ConfigError naming it."""
        import tomllib  # here: only environments built from a file pay for it

        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise ConfigError(f"judged task {path}: {e}") from None
        defaults = data.pop(_TOML_DEFAULTS_TABLE, {})
        missing = [key for key in _TOML_FIELDS if key not in data]
        unknown = sorted(set(data) - set(_TOML_FIELDS))
        if missing or unknown:
            raise ConfigError(
                f"judged task {path}: missing {missing or 'nothing'}, unknown {unknown or 'none'}"
                f" (it takes {', '.join(_TOML_FIELDS)} and a [{_TOML_DEFAULTS_TABLE}] table)"
            )
        _build_arguments(defaults)  # an argument build does not take is an error now
        return cls(
            name=data["name"],
            dataset_name=data["dataset_name"],
            sample=path.parent / data["sample"],
            instruction=data["instruction"],
            official_instruction=cls.intellect3_instruction(data["intellect3_module"]),
            judge_prompt=judge_prompt,
            rubric=rubric,
            official_judge_prompts=list(official_judge_prompts),
            difficulty_key=data["difficulty_key"] or None,
            defaults=defaults,
        )

    def loader(self, function: _Loader) -> _Loader:
        """Decorate the environment's ``load_environment(**arguments)``, which passes its
        arguments to `build`, so that it takes `build`'s arguments in `build`'s order, by name
        or position, defaulting to this task's ``dataset_name``, ``difficulty_key``,
        ``judge_prompt`` and `defaults` where `build` has none of its own.

        The signature is written once, for every such environment, yet reads as if written out
        in each: upstream's tests read its defaults with ``inspect.signature``,
        `vf.load_environment` names the accepted arguments from it, and an unknown, missing or
        repeated argument is a TypeError naming the function before anything loads."""
        own = {
            "dataset_name": self.dataset_name,
            "difficulty_key": self.difficulty_key,
            "judge_prompt": self.judge_prompt,
            **self.defaults,
        }
        signature = _loader_signature(own).replace(
            return_annotation=inspect.signature(function).return_annotation
        )

        @functools.wraps(function)
        def load_environment(*args: Any, **kwargs: Any) -> Any:
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as e:
                raise TypeError(f"{function.__name__}() {e}") from None
            bound.apply_defaults()
            return function(**bound.arguments)

        load_environment.__signature__ = signature  # type: ignore[attr-defined]
        return load_environment  # type: ignore[return-value]

    @staticmethod
    def intellect3_instruction(module: str) -> PromptSource:
        """Where upstream's instruction line is published for INTELLECT-3 environment
        ``module`` (e.g. "i3_math"): the ``INSTRUCTION_PROMPT`` constant of its module in
        research-environments (`INTELLECT3_ENVIRONMENTS`)."""
        return PromptSource(
            url=f"{INTELLECT3_ENVIRONMENTS}/{module}/{module}.py", name="INSTRUCTION_PROMPT"
        )

    def prepare_dataset(
        self,
        dataset: Any,
        *,
        instruction_prompt: str | None = None,
        difficulty_key: str | Literal[_Own.VALUE] | None = _Own.VALUE,
        min_avg_reward: float = 0.0,
        max_avg_reward: float = 1.0,
        keep_unrated: bool = False,
        task: str | None = None,
        what: str = "dataset",
    ) -> Any:
        """Validate rows, apply the pass-rate filter and build the environment's columns:
        ``question`` (instruction + blank line + problem), ``answer``, ``task`` and ``info``
        (see `vf.prepare_qa_dataset` for the errors). Left out, ``instruction_prompt`` is the
        task's ``instruction`` and ``difficulty_key`` the task's ``difficulty_key``."""
        if instruction_prompt is None:
            instruction_prompt = self.instruction
        if difficulty_key is _Own.VALUE:
            difficulty_key = self.difficulty_key
        pass_rate = PassRateFilter(difficulty_key, min_avg_reward, max_avg_reward, keep_unrated)
        return self._prepare(dataset, instruction_prompt, pass_rate, task or self.name, what)

    @staticmethod
    def _prepare(
        dataset: Any, instruction: str, pass_rate: PassRateFilter, task: str, what: str
    ) -> Any:
        from verifiers.dataset import prepare_qa_dataset

        return prepare_qa_dataset(
            dataset, instruction=instruction, pass_rate=pass_rate, task=task, what=what
        )

    def build(
        self,
        *,
        source: Any = "auto",
        dataset_name: str,
        dataset_subset: str,
        dataset_split: str = "train",
        dataset_shuffle: bool = False,
        seed: int = 42,
        difficulty_key: str | None,
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
        judge_prompt: Any = None,
    ) -> SingleTurnEnv:
        """The environment, from an environment's ``load_environment`` arguments.

        Args:
            source: "auto" (the hub dataset when reachable, else the bundled sample), "hub",
                "sample", a local file/folder path, a list of row dicts or a
                ``datasets.Dataset``. Rows need ``question`` and ``answer``; ``info`` and the
                difficulty column are optional.
            dataset_name: the hub dataset.
            dataset_subset: its config.
            dataset_split: its split.
            dataset_shuffle: shuffle the rows (after filtering).
            seed: the shuffle's seed.
            difficulty_key: the pass-rate column used by the difficulty filter.
            min_avg_reward: keep rows whose pass rate is at least this.
            max_avg_reward: and at most this. [0, 1] filters nothing; a narrower range on a
                dataset without ``difficulty_key`` is an error.
            keep_unrated: with a filter active, keep rows whose pass rate is empty.
            instruction_prompt: put before each problem (then a blank line). None: the task's
                own; ``"official"``: upstream's (``official_instruction``, loaded at load time
                and cached on disk); other text: used as is.
            system_prompt: an optional system message.
            max_answer_chars: a boxed answer longer than this scores 0 (not graded or judged).
            require_think_close: a completion without ``</think>`` has no answer.
            math_verify_timeout: math-verify's per-operation timeout (s).
            math_verify_workers: grading processes (default: the machine's CPU count).
            numeric_rel_tol: relative tolerance for decimal answers (the rubric's meaning).
            judge_model: enable the LLM-judge fallback with this model (None: off).
            judge_base_url: the judge's OpenAI-compatible endpoint (default
                ``OPENAI_BASE_URL``).
            judge_api_key_var: environment variable holding the judge's API key (None: the key
                "EMPTY", for a local judge without one).
            judge_sampling_args: sampling arguments of judge requests.
            judge_timeout: a judge request's timeout (s).
            judge_max_concurrent: judge requests in flight at most.
            judge_prompt: the judge's template (``{question}``, ``{answer}``, ``{response}``);
                None: the task's; ``"official"``: upstream's (``official_judge_prompts``); a
                `vf.PromptSource` dict loads another published text.
        """
        from verifiers.utils.environment_arguments import dataset_from_arguments
        from verifiers.utils.published_prompts import resolve_prompt

        dataset = dataset_from_arguments(
            locals(), sample=self.sample, required_columns=["question", "answer"]
        )
        instruction = resolve_prompt(
            instruction_prompt,
            self.instruction,
            [self.official_instruction],
            argument="instruction_prompt",
        )
        pass_rate = PassRateFilter(difficulty_key, min_avg_reward, max_avg_reward, keep_unrated)
        what = self._describe(source, dataset_name)
        dataset = self._prepare(dataset, instruction, pass_rate, self.name, what)
        if dataset_shuffle:
            dataset = dataset.shuffle(seed=seed)
        parser = boxed_answer_parser(require_think_close)
        rubric = self.rubric(
            parser=parser,
            max_answer_chars=max_answer_chars,
            math_verify_timeout=math_verify_timeout,
            math_verify_workers=math_verify_workers,
            numeric_rel_tol=numeric_rel_tol,
            judge=JudgeFallbackRubric.build_judge(
                parser,
                model=judge_model,
                prompt=self.judge_prompt if judge_prompt is None else judge_prompt,
                default_prompt=self.judge_prompt,
                official=self.official_judge_prompts,
                base_url=judge_base_url,
                api_key_var=judge_api_key_var,
                sampling_args=judge_sampling_args,
                timeout=judge_timeout,
                max_concurrent=judge_max_concurrent,
            ),
        )
        return SingleTurnEnv(
            dataset=dataset, system_prompt=system_prompt, parser=parser, rubric=rubric
        )

    def _describe(self, source: Any, dataset_name: str) -> str:
        """Where the rows came from, for error messages."""
        if isinstance(source, str | Path) and str(source) not in ("auto", "hub", "sample"):
            return f"dataset {source}"
        if source == "sample":
            return f"sample {self.sample.name}"
        return "dataset" if not isinstance(source, str) else f"dataset {dataset_name}"


def _loader_signature(defaults: Mapping[str, Any]) -> inspect.Signature:
    """`JudgedBoxedTask.build`'s arguments as an environment's ``load_environment`` takes them:
    by position or name, each defaulting to ``defaults[name]`` or else to `build`'s default
    (every argument needs one: ``dataset_subset`` has none in `build`)."""
    arguments = _build_arguments(defaults)
    missing = [p.name for p in arguments if p.default is p.empty and p.name not in defaults]
    if missing:
        raise ConfigError(f"a judged environment needs its own default for {', '.join(missing)}")
    return inspect.Signature(
        [
            p.replace(kind=p.POSITIONAL_OR_KEYWORD, default=defaults.get(p.name, p.default))
            for p in arguments
        ]
    )


def _build_arguments(names: Iterable[str]) -> list[inspect.Parameter]:
    """`JudgedBoxedTask.build`'s parameters, after checking that it takes each of ``names``."""
    build = inspect.signature(JudgedBoxedTask.build)
    arguments = [p for p in build.parameters.values() if p.name != "self"]
    unknown = sorted(set(names) - {p.name for p in arguments})
    if unknown:
        raise ConfigError(f"JudgedBoxedTask.build takes no {', '.join(map(repr, unknown))}")
    return arguments
