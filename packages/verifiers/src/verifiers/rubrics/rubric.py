"""Rubric: weighted reward functions and zero-weight metrics, scored per rollout or per group.

Reward functions ask for what they need by parameter name (`prompt`, `completion`, `answer`,
`state`, `info`, `task`, `parser`, any extra dataset column, any class object); they run in
registration order (`reward_calls`). Sync functions measured under 0.2 ms run on the event loop
(a thread hop costs more); the others in worker threads, batched unless slow (`sync_calls`), so
a slow one never stalls the loop. A function that raises is recorded
as an error on the rollout and its score is NaN — never a silent 0.0.

`funcs` and `weights` are plain lists, as upstream (subclasses assign and append to them, also
under their 0.1-era names `reward_funcs` / `reward_weights`). The parts: `reward_registry` (call
plans), `reward_calls` (running them), `scores` (bookkeeping), `cleanup_handlers` (cleanup and
teardown), `classic_scoring` (0.1-era call shapes, overrides and spellings, decided per class).
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from concurrent.futures import Executor
from typing import Any, ClassVar

from verifiers.errors import ConfigError
from verifiers.rubrics import classic_scoring
from verifiers.rubrics.handlers import Handlers
from verifiers.rubrics.reward_calls import (
    GroupScoreObjectProvider,
    ScoreObjectProvider,
    group_available,
    rollout_available,
    run_reward_funcs,
    score_single,
    state_fields,
)
from verifiers.rubrics.reward_registry import (
    GROUP_PARAMS,
    STATE_PARAMS,
    RewardRegistry,
    RewardSpec,
    check_parameters,
)
from verifiers.rubrics.scores import (
    NAN,
    Score,
    apply_score,
    is_infra_exception,
    is_infra_failure,
    note_scoring_time,
    reward_error,
    set_advantages,
)
from verifiers.rubrics.sync_calls import SyncCalls

__all__ = [
    "GROUP_PARAMS",
    "NAN",
    "STATE_PARAMS",
    "GroupScoreObjectProvider",
    "RewardSpec",
    "Rubric",
    "Score",
    "ScoreObjectProvider",
    "apply_score",
    "is_infra_exception",
    "is_infra_failure",
    "note_scoring_time",
    "reward_error",
    "set_advantages",
]


class Rubric:
    """A set of weighted reward functions (and metrics, weight 0).

    `reward_funcs` / `reward_weights` are 0.1.3–0.1.7's spellings of `funcs` / `weights`. Extra
    keyword arguments become attributes of the rubric (as there) and objects reward functions
    can ask for by name.
    `self.logger` is `logging.getLogger("verifiers.rubrics.rubric.<ClassName>")`.
    """

    # The 0.1-era scoring methods this class overrides (decided in `__init_subclass__`).
    classic_overrides: ClassVar[frozenset[str]] = frozenset()

    # Whether the class keeps the base `compute_scores` / `available_for` /
    # `score_available`: then scoring calls what they do directly, without their layers
    # (decided per class, as above).
    _base_compute_scores: ClassVar[bool] = True
    _base_available: ClassVar[bool] = True
    _base_score_available: ClassVar[bool] = True
    # All of the above and no 0.1-era override: one rollout is scored by `score_single`.
    _direct_single: ClassVar[bool] = True
    # `_direct_single` and the base `score_rollout`: an environment scores one rollout with
    # `direct_scoring`, without awaiting `score_rollout` (decided per class, as above).
    _direct_rollout: ClassVar[bool] = True
    # Whether the class keeps the base `cleanup` (see `_cleans_up`).
    _base_cleanup: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.classic_overrides = classic_scoring.adapt_overrides(cls, Rubric)
        cls._base_compute_scores = cls.compute_scores is Rubric.compute_scores
        cls._base_available = cls.available_for is Rubric.available_for
        cls._base_score_available = cls.score_available is Rubric.score_available
        cls._direct_single = (
            cls._base_compute_scores
            and cls._base_available
            and cls._base_score_available
            and not cls.classic_overrides
        )
        cls._direct_rollout = cls._direct_single and cls.score_rollout is Rubric.score_rollout
        cls._base_cleanup = cls.cleanup is Rubric.cleanup

    def __init__(
        self,
        funcs: Sequence[Callable[..., Any]] | None = None,
        weights: Sequence[float] | None = None,
        parser: Any = None,
        parallelize_scoring: bool = True,
        *,
        reward_funcs: Sequence[Callable[..., Any]] | None = None,
        reward_weights: Sequence[float] | None = None,
        **kwargs: Any,
    ) -> None:
        from verifiers.parsers import Parser

        # Upstream 0.3.1 names it after the base module and the instance's class.
        self.logger = logging.getLogger(f"{__name__}.{type(self).__name__}")
        self.reward_registry = RewardRegistry()
        self.sync_calls = SyncCalls(self.logger)
        self.cleanup_handlers = Handlers()
        self.funcs: list[Callable[..., Any]] = list(funcs or [])
        self.weights: list[float] = list(weights or [])
        self.parser = parser if parser is not None else Parser()
        self.class_objects: dict[str, Any] = {"parser": self.parser}
        self.parallelize_scoring = parallelize_scoring
        self.executor: Executor | None = None  # None: the event loop's default executor
        self.score_object_providers: list[ScoreObjectProvider] = []
        self.group_score_object_providers: list[GroupScoreObjectProvider] = []
        # 0.1.3-0.1.7 set extra keywords as attributes after the lists, so these replaced them.
        if reward_funcs is not None:
            self.funcs = list(reward_funcs)
        if reward_weights is not None:
            self.weights = list(reward_weights)
        for key, value in kwargs.items():
            setattr(self, key, value)
            self.class_objects[key] = value
        if not self.weights:
            self.weights = [1.0] * len(self.funcs)
        elif len(self.weights) != len(self.funcs):
            raise ConfigError(
                f"Rubric got {len(self.funcs)} reward functions but {len(self.weights)} weights"
            )

    # -- registration ---------------------------------------------------------------
    def add_reward_func(self, func: Callable[..., Any], weight: float = 1.0) -> None:
        self.funcs.append(func)
        self.weights.append(weight)

    def add_metric(self, func: Callable[..., Any], weight: float = 0.0) -> None:
        self.add_reward_func(func, weight)

    def add_class_object(self, name: str, obj: Any) -> None:
        self.class_objects[name] = obj

    def add_score_object_provider(self, provider: ScoreObjectProvider) -> None:
        """`provider(state)` returns more objects reward functions can ask for."""
        self.score_object_providers.append(provider)

    def add_group_score_object_provider(self, provider: GroupScoreObjectProvider) -> None:
        """`provider(states)` returns more objects group reward functions can ask for."""
        self.group_score_object_providers.append(provider)

    reward_funcs = classic_scoring.ListAlias("funcs")
    reward_weights = classic_scoring.ListAlias("weights")

    def get_reward_func_names(self) -> list[str]:
        return [s.name for s in self.specs()]

    def get_reward_funcs(self) -> list[Callable[..., Any]]:
        return list(self.funcs)

    def get_reward_weights(self) -> list[float]:
        return list(self.weights)

    _get_reward_func_names = classic_scoring._get_reward_func_names
    _get_reward_funcs = classic_scoring._get_reward_funcs
    _get_reward_weights = classic_scoring._get_reward_weights
    _is_group_func = classic_scoring._is_group_func
    _get_individual_reward_funcs = classic_scoring._get_individual_reward_funcs
    _get_group_reward_funcs = classic_scoring._get_group_reward_funcs

    def specs(self) -> list[RewardSpec]:
        """The reward functions with their weights and call signatures, in order."""
        return list(self.reward_registry.specs(self.funcs, self.weights))

    @property
    def has_group_funcs(self) -> bool:
        return any(s.is_group for s in self.specs())

    requires_group_scoring = has_group_funcs
    has_group_rewards = has_group_funcs

    @property
    def has_advantages(self) -> bool:
        return False

    def check_parameters(self, input_columns: Iterable[str]) -> None:
        """Raise `ConfigError` naming any reward function that asks for an unknown name."""
        if self.score_object_providers or self.group_score_object_providers:
            return  # providers add names only known at scoring time
        check_parameters(self.specs(), input_columns, self.class_objects)

    # -- scoring --------------------------------------------------------------------
    async def score_rollout(self, *args: Any, **kwargs: Any) -> Any:
        """Score one rollout: `score_rollout(state)` scores it in place (0.1.8+; also
        `score_rollout(state, score_sem)`); `score_rollout(prompt, completion, answer, state,
        task, info)` returns its `RolloutScore` (0.1.2–0.1.7)."""
        if len(args) == 1 and not kwargs:
            state, sem = args[0], None
            if self._direct_single:
                started = time.perf_counter()
                scoring = _score_single(self, state)
                if scoring is not None:
                    apply_score(state, await scoring)
                    note_scoring_time([state], time.perf_counter() - started)
                    return None
        else:
            call = classic_scoring.state_call(args, kwargs, "state")
            if call is None:
                return await classic_scoring.score_rollout_call(self, args, kwargs)
            state, sem = call
        started = time.perf_counter()
        if sem is not None:
            async with sem:
                (score,) = await _scores_of(self, [state])
        else:
            (score,) = await _scores_of(self, [state])
        apply_score(state, score)
        note_scoring_time([state], time.perf_counter() - started)
        return None

    async def score_group(
        self, states: list[dict[str, Any]], score_sem: Any = None, **_: Any
    ) -> None:
        """Score a group of rollouts of one example; also sets group-relative advantages.
        (0.1.8 passed a `score_sem` to hold while scoring.)"""
        if not states:
            self.logger.warning("No states to score")
            return
        started = time.perf_counter()
        if classic_scoring.is_semaphore(score_sem):
            async with score_sem:
                scores = await _scores_of(self, states)
        else:
            scores = await _scores_of(self, states)
        for state, score in zip(states, scores, strict=True):
            apply_score(state, score)
        set_advantages(states)
        note_scoring_time(states, time.perf_counter() - started)

    async def score_rollouts(self, *args: Any, **kwargs: Any) -> Any:
        """`score_rollouts(states)` = `score_group`; the 0.1.2–0.1.7 form
        `score_rollouts(prompts, completions, answers, states, tasks, infos)` returns the
        group's `RolloutScores` without touching the states."""
        call = classic_scoring.state_call(args, kwargs, "states")
        if call is None:
            return await classic_scoring.score_rollouts_call(self, args, kwargs)
        await self.score_group(call[0])
        return None

    async def dummy_score_rollout(self, state: dict[str, Any]) -> None:
        state["reward"] = 0.0
        state["metrics"] = {}

    async def dummy_score_group(self, states: list[dict[str, Any]]) -> None:
        for state in states:
            await self.dummy_score_rollout(state)

    async def compute_scores(self, states: list[dict[str, Any]]) -> list[Score]:
        """Score states without modifying them (beyond what reward functions do). A subclass
        overriding the 0.1-era `score_rollouts` / `score_rollout` is scored through it."""
        return await _scoring(self, states)

    async def score_available(self, avails: list[dict[str, Any]]) -> list[Score]:
        """Score rollouts given as the objects reward functions may ask for (one dict each)."""
        return await _reward_funcs(self, avails)

    def available_for(self, state: Any, *, input: Any = None, **fields: Any) -> dict[str, Any]:
        """What a reward function of this rollout can ask for: the input row's columns, the
        class objects, the rollout's fields and `state`, then the score object providers'."""
        return rollout_available(
            self.class_objects, self.score_object_providers, state, input, fields
        )

    # -- lifecycle ------------------------------------------------------------------
    def add_cleanup_handler(self, handler: Callable[..., Any]) -> None:
        """Run `handler` (asking by name for `state` and the rollout's fields) after every
        rollout, with the `@vf.cleanup` methods, by descending `cleanup_priority`."""
        self.cleanup_handlers.add_cleanup(handler)

    def _cleans_up(self) -> bool:
        """Whether `cleanup` has anything to do: an override, or cleanup handlers (when it
        has not, the environment skips the call per rollout)."""
        return (
            not self._base_cleanup
            or "cleanup" in self.__dict__
            or bool(self.cleanup_handlers.cleanup_plans(self))
        )

    async def cleanup(self, state: dict[str, Any]) -> None:
        """After scoring each rollout: the rubric's `@vf.cleanup` methods (upstream 0.3.1)."""
        if self.cleanup_handlers.cleanup_plans(self):  # none: nothing to build per rollout
            await self.cleanup_handlers.cleanup(
                self, lambda: self.available_for(state, **state_fields(state))
            )

    async def teardown(self) -> None:
        """Called once when the environment is torn down: the `@vf.teardown` methods."""
        await self.cleanup_handlers.teardown(self)


# Scoring's plumbing, as functions of the rubric: each hands back the awaitable that scores,
# so a class keeping the base methods is scored without their coroutine layers.
def _scores_of(rubric: Rubric, states: list[dict[str, Any]]) -> Awaitable[list[Score]]:
    """`rubric.compute_scores(states)`, without its layer when the class keeps the base."""
    if rubric._base_compute_scores:
        return _scoring(rubric, states)
    return rubric.compute_scores(states)


def direct_scoring(rubric: Any, state: Any) -> Awaitable[Score] | None:
    """What `rubric.score_rollout(state)` awaits when the rubric's class keeps every base
    scoring layer: the state's `Score`, for `apply_score` (the caller then records the
    scoring time); None when the call must go through `score_rollout` (a subclass's or the
    instance's own, a rubric of another make, or a group reward function)."""
    if not getattr(type(rubric), "_direct_rollout", False) or "score_rollout" in rubric.__dict__:
        return None
    return _score_single(rubric, state)


def _score_single(rubric: Rubric, state: Any) -> Awaitable[Score] | None:
    """One rollout of a rubric scored by the base layers, without them: None (take the
    general path) when a reward function scores groups."""
    registry = rubric.reward_registry
    specs = registry.specs(rubric.funcs, rubric.weights)
    if registry.has_group:
        return None
    avail = _base_available_for(rubric, state)
    return score_single(specs, avail, rubric.sync_calls, rubric.executor)


def _base_available_for(rubric: Rubric, state: Any) -> dict[str, Any]:
    """The base `available_for`'s work for one state."""
    fields = state_fields(state)
    input = fields.pop("input", None)
    return rollout_available(
        rubric.class_objects, rubric.score_object_providers, state, input, fields
    )


def _scoring(rubric: Rubric, states: list[dict[str, Any]]) -> Awaitable[list[Score]]:
    """The base `compute_scores`' work."""
    if rubric.classic_overrides:
        return classic_scoring.scores_from_overrides(rubric, states)
    if rubric._base_available:
        avails = [_base_available_for(rubric, s) for s in states]
    else:
        avails = [rubric.available_for(s, **state_fields(s)) for s in states]
    if rubric._base_score_available:
        return _reward_funcs(rubric, avails)
    return rubric.score_available(avails)


def _reward_funcs(rubric: Rubric, avails: list[dict[str, Any]]) -> Awaitable[list[Score]]:
    """The base `score_available`'s work."""
    grouped = functools.partial(
        group_available, rubric.class_objects, rubric.group_score_object_providers
    )
    return run_reward_funcs(rubric.specs(), avails, grouped, rubric.sync_calls, rubric.executor)
