"""A rubric's classic (0.1.2–0.3) call shapes, overrides and spellings, adapted once.

Before 0.1.8 a rubric was scored with the rollout's parts spelled out:
`score_rollout(prompt, completion, answer, state, task, info, **kwargs)` returned a
`RolloutScore` (`reward`, `metrics`) and `score_rollouts(prompts, completions, answers, states,
tasks, infos, **kwargs)` a `RolloutScores` (`reward` list, `metrics` name -> list); environments
of that era override them. Both forms are accepted when called, and a subclass overriding
either in that form is what scores its rollouts: that is decided once per class
(`adapt_overrides`, from `Rubric.__init_subclass__`), not per call. The 0.1-era names of the
rubric's lists and the 0.1.8+ private method spellings are defined here too.

This module does not import the rubric: it works on any object with the rubric's methods.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from verifiers.rubrics.reward_registry import RewardRegistry, RewardSpec
from verifiers.rubrics.scores import NAN, Score, reward_error

_ROLLOUT_ARGS = ("prompt", "completion", "answer", "state", "task", "info")
_GROUP_ARGS = ("prompts", "completions", "answers", "states", "tasks", "infos")
CLASSIC_FIRST_PARAM = {"score_rollout": "prompt", "score_rollouts": "prompts"}


class ScoringRubric(Protocol):
    """What the adapters use of a rubric."""

    reward_registry: RewardRegistry

    @property
    def classic_overrides(self) -> frozenset[str]: ...

    def specs(self) -> Sequence[RewardSpec]: ...

    def available_for(self, state: Any, *, input: Any = None, **fields: Any) -> dict[str, Any]: ...

    async def score_available(self, avails: list[dict[str, Any]]) -> list[Score]: ...

    async def score_rollout(self, *args: Any, **kwargs: Any) -> Any: ...

    async def score_rollouts(self, *args: Any, **kwargs: Any) -> Any: ...

    def get_reward_func_names(self) -> list[str]: ...

    def get_reward_funcs(self) -> list[Callable[..., Any]]: ...

    def get_reward_weights(self) -> list[float]: ...


# -- call shapes ----------------------------------------------------------------------------
def is_semaphore(obj: Any) -> bool:
    """0.1.8 passed a scoring semaphore after the state(s): `score_rollout(state, score_sem)`."""
    return hasattr(obj, "__aenter__") and hasattr(obj, "__aexit__")


def state_call(
    args: tuple[Any, ...], kwargs: dict[str, Any], first: str, sem: str = "score_sem"
) -> tuple[Any, Any] | None:
    """`(state(s), semaphore or None)` of a 0.1.8+ call (`score_rollout(state)`,
    `score_rollout(state, score_sem)`, keywords too), or None for the 0.1.2–0.1.7 form."""
    if _CLASSIC_KEYWORDS[first] & kwargs.keys():
        return None
    if len(args) >= 2 and not is_semaphore(args[1]):
        return None
    target = args[0] if args else kwargs[first]
    return target, args[1] if len(args) > 1 else kwargs.get(sem)


_CLASSIC_KEYWORDS = {"state": {"prompt", "completion"}, "states": {"prompts", "completions"}}


def _bind(
    names: tuple[str, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    if len(args) > len(names):
        raise TypeError(f"expected at most {len(names)} positional arguments, got {len(args)}")
    bound = dict(zip(names, args, strict=False))
    extra = {}
    for key, value in kwargs.items():
        if key in names:
            if key in bound:
                raise TypeError(f"got multiple values for argument {key!r}")
            bound[key] = value
        else:
            extra[key] = value
    return bound, extra


def _field(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def _avail(rubric: ScoringRubric, bound: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    state = bound.get("state")
    if state is None:
        state = {}
    avail = rubric.available_for(
        state,
        prompt=bound.get("prompt"),
        completion=bound.get("completion"),
        answer=bound.get("answer", ""),
        info=bound.get("info") or {},
        task=bound.get("task", "default"),
        example_id=_field(state, "example_id"),
        input=_field(state, "input"),
    )
    avail.update(extra)
    return avail


async def score_rollout_call(
    rubric: ScoringRubric, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> dict[str, Any]:
    bound, extra = _bind(_ROLLOUT_ARGS, args, kwargs)
    (score,) = await rubric.score_available([_avail(rubric, bound, extra)])
    _note_error(bound.get("state"), score)
    return {"reward": score.reward, "metrics": score.metrics}


async def score_rollouts_call(
    rubric: ScoringRubric, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> dict[str, Any]:
    bound, extra = _bind(_GROUP_ARGS, args, kwargs)
    completions = list(bound.get("completions") or [])
    n = len(completions)

    def column(name: str, default: Any) -> list[Any]:
        values = list(bound.get(name) or [])[:n]
        return values + [default() if callable(default) else default] * (n - len(values))

    prompts, answers = column("prompts", None), column("answers", "")
    states, tasks, infos = column("states", dict), column("tasks", "default"), column("infos", dict)
    rows = list(zip(prompts, completions, answers, states, tasks, infos, strict=True))
    if "score_rollout" in rubric.classic_overrides:
        results = await asyncio.gather(*(rubric.score_rollout(*row, **extra) for row in rows))
        scores = [_score_of(r) for r in results]
    else:
        avails = [_avail(rubric, dict(zip(_ROLLOUT_ARGS, row, strict=True)), extra) for row in rows]
        scores = await rubric.score_available(avails)
        for state, score in zip(states, scores, strict=True):
            _note_error(state, score)
    names = list(dict.fromkeys(k for s in scores for k in s.metrics))
    return {
        "reward": [s.reward for s in scores],
        "metrics": {k: [s.metrics.get(k, NAN) for s in scores] for k in names},
    }


def _note_error(state: Any, score: Score) -> None:
    if score.error is not None and isinstance(state, dict) and state.get("error") is None:
        state["error"] = score.error


def _score_of(result: Any) -> Score:
    metrics = _field(result, "metrics") or {}
    return Score(float(_field(result, "reward")), {k: float(v) for k, v in metrics.items()})


# -- overrides, decided per class -------------------------------------------------------------
def adapt_overrides(cls: type, base: type) -> frozenset[str]:
    """The scoring methods `cls` overrides in the 0.1-era form (`score_rollout(self, prompt,
    ...)` / `score_rollouts(self, prompts, ...)`). Such an override defined by `cls` itself is
    wrapped so that a 0.1.8+ call of it (`score_rollout(state)`, as environments make) scores
    in place through it, as the base method does for every classic override."""
    found = set()
    for name, first in CLASSIC_FIRST_PARAM.items():
        method = getattr(cls, name, None)
        if method is None or method is getattr(base, name):
            continue
        try:
            params = list(inspect.signature(method).parameters)[1:]
        except (TypeError, ValueError):
            continue
        if not params or params[0] != first:
            continue
        found.add(name)
        own = cls.__dict__.get(name)
        if inspect.iscoroutinefunction(own) and not hasattr(own, "__classic_override__"):
            target = "state" if name == "score_rollout" else "states"
            setattr(cls, name, _either_shape(own, getattr(base, name), target))
    return frozenset(found)


def _either_shape(
    override: Callable[..., Awaitable[Any]],
    base_method: Callable[..., Awaitable[Any]],
    first: str,
) -> Callable[..., Awaitable[Any]]:
    @functools.wraps(override)
    async def either(self: Any, *args: Any, **kwargs: Any) -> Any:
        if state_call(args, kwargs, first) is None:
            return await override(self, *args, **kwargs)
        return await base_method(self, *args, **kwargs)

    either.__classic_override__ = True  # type: ignore[attr-defined]
    return either


async def scores_from_overrides(rubric: ScoringRubric, states: list[dict[str, Any]]) -> list[Score]:
    """The scores of `states` from the class's 0.1-era `score_rollouts` / `score_rollout`
    override. An override that raises, or returns the wrong number of scores, errors every
    rollout of the call (NaN), as a failing reward function does."""
    name = "score_rollouts" if "score_rollouts" in rubric.classic_overrides else "score_rollout"
    if not states:
        return []
    rows = [
        (
            s.get("prompt"),
            s.get("completion"),
            s.get("answer", ""),
            s,
            s.get("task") or "default",
            s.get("info") or {},
        )
        for s in states
    ]
    try:
        if name == "score_rollouts":
            result = await rubric.score_rollouts(*(list(col) for col in zip(*rows, strict=True)))
            rewards = list(_field(result, "reward"))
            metrics = _field(result, "metrics") or {}
            if len(rewards) != len(states):
                raise ValueError(f"returned {len(rewards)} rewards for {len(states)} rollouts")
            return [
                Score(float(r), {k: float(v[i]) for k, v in metrics.items()})
                for i, r in enumerate(rewards)
            ]
        results = await asyncio.gather(*(rubric.score_rollout(*row) for row in rows))
        return [_score_of(r) for r in results]
    except Exception as e:
        record = reward_error(f"{type(rubric).__name__}.{name}", e)
        return [Score(NAN, {}, record.copy()) for _ in states]


# -- spellings ------------------------------------------------------------------------------
class ListAlias:
    """Another name of one of the rubric's lists (`reward_funcs` for `funcs`, 0.1.3–0.1.7);
    assigning it assigns the list."""

    def __init__(self, target: str) -> None:
        self.target = target

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        return self if obj is None else getattr(obj, self.target)

    def __set__(self, obj: Any, value: Sequence[Any]) -> None:
        setattr(obj, self.target, list(value))


# upstream 0.1.8+'s private spellings, which subclasses and environments call
def _get_reward_func_names(self: ScoringRubric) -> list[str]:
    return self.get_reward_func_names()


def _get_reward_funcs(self: ScoringRubric) -> list[Callable[..., Any]]:
    return self.get_reward_funcs()


def _get_reward_weights(self: ScoringRubric) -> list[float]:
    return self.get_reward_weights()


def _is_group_func(self: ScoringRubric, func: Callable[..., Any]) -> bool:
    return self.reward_registry.is_group(func)


def _get_individual_reward_funcs(self: ScoringRubric) -> list[Callable[..., Any]]:
    return [s.func for s in self.specs() if not s.is_group]


def _get_group_reward_funcs(self: ScoringRubric) -> list[Callable[..., Any]]:
    return [s.func for s in self.specs() if s.is_group]
