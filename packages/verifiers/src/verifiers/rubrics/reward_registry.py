"""Reward functions with their call plans: what each asks for, whether it is async or scores a
whole group, read once per function and reused while the rubric's lists stay the same."""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from verifiers.errors import ConfigError
from verifiers.utils.callables import CallSpec, call_spec

GROUP_PARAMS = frozenset({"states", "prompts", "completions", "answers", "tasks", "infos"})
STATE_PARAMS = ("prompt", "completion", "answer", "state", "info", "task", "example_id")


@dataclass(frozen=True, slots=True)
class RewardSpec:
    """One reward function of a rubric, its weight and how it is called."""

    func: Callable[..., Any]
    weight: float
    call: CallSpec
    is_group: bool

    @property
    def name(self) -> str:
        return self.call.name


class RewardRegistry:
    """The call plans of a rubric's `funcs` / `weights`.

    The lists stay plain lists that subclasses assign and append to (as upstream), so the
    plans are keyed by their contents: a function's signature is read the first time it is
    seen, and the tuple of plans is rebuilt only when a list changed."""

    __slots__ = ("_calls", "_key", "_specs", "has_group")

    def __init__(self) -> None:
        self._calls: dict[int, tuple[Callable[..., Any], CallSpec, bool]] = {}
        self._key: tuple[tuple[Any, ...], tuple[Any, ...]] | None = None
        self._specs: tuple[RewardSpec, ...] = ()
        self.has_group = False  # whether the last `specs` returned hold a group function

    def specs(
        self, funcs: Sequence[Callable[..., Any]], weights: Sequence[float]
    ) -> tuple[RewardSpec, ...]:
        key = (tuple(funcs), tuple(weights))
        last = self._key
        # Identity, not `==`: two equal callable objects are still two functions.
        if (
            last is not None
            and len(key[0]) == len(last[0])
            and all(map(operator.is_, key[0], last[0]))
            and key[1] == last[1]
        ):
            return self._specs
        if len(key[0]) != len(key[1]):
            raise ConfigError(
                f"Rubric has {len(key[0])} reward functions but {len(key[1])} weights"
            )
        self._specs = tuple(self._spec(f, w) for f, w in zip(*key, strict=True))
        self.has_group = any(s.is_group for s in self._specs)
        self._key = key
        return self._specs

    def is_group(self, func: Callable[..., Any]) -> bool:
        return self._plan(func)[2]

    def _spec(self, func: Callable[..., Any], weight: float) -> RewardSpec:
        _, call, is_group = self._plan(func)
        return RewardSpec(func, float(weight), call, is_group)

    def _plan(self, func: Callable[..., Any]) -> tuple[Callable[..., Any], CallSpec, bool]:
        hit = self._calls.get(id(func))
        if hit is None or hit[0] is not func:
            call = call_spec(func)
            is_group = bool((call.params or frozenset()) & GROUP_PARAMS) or call.returns_list
            hit = (func, call, is_group)
            self._calls[id(func)] = hit
        return hit


def check_parameters(
    specs: Iterable[RewardSpec], input_columns: Iterable[str], class_objects: Iterable[str]
) -> None:
    """Raise `ConfigError` naming any reward function that asks for an unknown name."""
    objects = set(class_objects)
    individual = set(STATE_PARAMS) | set(input_columns) | objects
    group = GROUP_PARAMS | {"example_ids"} | objects
    for s in specs:
        known = group if s.is_group else individual
        missing = s.call.missing(known)
        if missing:
            raise ConfigError(
                f"reward function {s.name!r} asks for {', '.join(map(repr, missing))}, "
                f"which {'is' if len(missing) == 1 else 'are'} not available; it can ask for "
                f"{', '.join(sorted(known))}"
            )
