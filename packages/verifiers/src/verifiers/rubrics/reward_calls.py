"""Calling a rubric's reward functions: what each is given, and the order they run in.

As upstream, the functions run in registration order: each one has finished for every rollout
of the call before the next starts, so a function may read what an earlier one left in
`state`. Once a function failed on infrastructure (an unreachable judge or sandbox), the
rollout's later functions are skipped (NaN): its reward is masked anyway. A function that
raises is recorded as an error on the rollout and its score is NaN — never a silent 0.0.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from concurrent.futures import Executor
from typing import Any

from verifiers.errors import RewardError
from verifiers.rubrics.reward_registry import RewardSpec
from verifiers.rubrics.scores import NAN, Score, ScoreTable, as_score, reward_error
from verifiers.rubrics.sync_calls import SyncCalls, awaitable
from verifiers.state import State

_STATE_GET = State.get
_INPUT_FIELDS = frozenset(State.INPUT_FIELDS)

ScoreObjectProvider = Callable[[Any], Mapping[str, Any]]
GroupScoreObjectProvider = Callable[[list[Any]], Mapping[str, Any]]


def state_fields(state: Mapping[str, Any]) -> dict[str, Any]:
    """The rollout fields of a state that reward functions ask for by name (and `input`)."""
    # A state holding the input's fields itself (as every state the loop makes does) is read
    # with `dict.get`, the same answers without a Python call per key (`State.get` falls
    # back to the input only for fields the state lacks).
    get: Any = type(state).get
    if get is _STATE_GET and state.keys() >= _INPUT_FIELDS:
        get = dict.get
    return {
        "prompt": get(state, "prompt"),
        "completion": get(state, "completion"),
        "answer": get(state, "answer", ""),
        "info": get(state, "info") or {},
        "task": get(state, "task"),
        "example_id": get(state, "example_id"),
        "input": get(state, "input"),
    }


def rollout_available(
    class_objects: Mapping[str, Any],
    providers: Iterable[ScoreObjectProvider],
    state: Any,
    input: Any,
    fields: Mapping[str, Any],
) -> dict[str, Any]:
    """The input row's columns, the class objects, the rollout's fields and `state`, then
    the score object providers' objects."""
    # (a dict first: `isinstance(x, Mapping)` is an ABC check, a Python call)
    avail = dict(input) if isinstance(input, dict) or isinstance(input, Mapping) else {}
    avail.update(class_objects)
    avail.update(fields)
    avail["state"] = state
    for provider in providers:
        avail.update(provider(state))
    return avail


def group_available(
    class_objects: Mapping[str, Any],
    providers: Iterable[GroupScoreObjectProvider],
    avails: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """What a group reward function can ask for: the class objects and one list per field."""
    avail = dict(class_objects)
    states = [a.get("state") for a in avails]
    avail.update(
        states=states,
        prompts=[a.get("prompt") for a in avails],
        completions=[a.get("completion") for a in avails],
        answers=[a.get("answer", "") for a in avails],
        infos=[a.get("info") or {} for a in avails],
        tasks=[a.get("task") for a in avails],
        example_ids=[a.get("example_id") for a in avails],
    )
    for provider in providers:
        avail.update(provider(states))
    return avail


async def run_reward_funcs(
    specs: Sequence[RewardSpec],
    avails: list[dict[str, Any]],
    group_avail: Callable[[list[dict[str, Any]]], dict[str, Any]],
    sync: SyncCalls,
    executor: Executor | None,
) -> list[Score]:
    """Score rollouts given as the objects reward functions may ask for (one dict each);
    sync functions run in `executor`'s threads (None: the loop's default executor)."""
    table = ScoreTable(len(avails), len(specs))
    grouped: dict[str, Any] | None = None
    for k, spec in enumerate(specs):
        if spec.is_group:
            if grouped is None:
                grouped = group_avail(avails)
            await _run_group_func(spec, k, grouped, len(avails), table, sync, executor)
        elif len(avails) == 1:
            await _run_one(spec, k, avails[0], 0, table, sync, executor)
        else:
            await asyncio.gather(
                *(_run_one(spec, k, a, i, table, sync, executor) for i, a in enumerate(avails))
            )
    return table.scores(specs)


async def score_single(
    specs: Sequence[RewardSpec],
    avail: dict[str, Any],
    sync: SyncCalls,
    executor: Executor | None,
) -> Score:
    """`run_reward_funcs` for one rollout and individual functions only, in one coroutine:
    the same values, errors and weighted reward, without the table, the per-call coroutines
    or the group plumbing (the single-rollout path every scored rollout takes)."""
    metrics: dict[str, float] = {}
    reward = 0.0
    error = None
    infra = False
    for spec in specs:
        call = spec.call
        if infra:  # skipped after an infrastructure failure, as in `_run_one`
            value = NAN
        else:
            func = spec.func
            try:
                # (a function taking **kwargs is given everything: no call to select)
                kwargs = avail if call.params is None else call.select(avail)
                if call.is_async:
                    raw = await func(**kwargs)
                elif sync.on_loop(func):
                    raw = sync.run_on_loop(func, kwargs)
                    if type(raw) is not float and awaitable(raw):
                        raw = await raw
                else:
                    raw = await sync.call(func, kwargs, executor)
                value = raw if type(raw) is float else as_score(raw)
            except Exception as e:
                value = NAN
                if error is None:
                    error = reward_error(call.name, e)
                    infra = bool(error["infra"])
        metrics[call.name] = value  # a name used twice keeps its last value, as upstream
        if spec.weight != 0.0:
            reward += spec.weight * value
    return Score(reward, metrics, error)


async def _run_one(
    spec: RewardSpec,
    k: int,
    avail: dict[str, Any],
    i: int,
    table: ScoreTable,
    sync: SyncCalls,
    executor: Executor | None,
) -> None:
    if table.infra_failed(i):
        # An earlier function hit broken infrastructure (judge, sandbox): the rollout is
        # masked anyway, and asking that infrastructure again only repeats its retries.
        return  # its value stays NaN
    try:
        value = await _call(spec, avail, sync, executor)
    except Exception as e:
        table.fail(i, k, spec.name, e)
        return
    table.record(i, k, spec.name, value)


async def _run_group_func(
    spec: RewardSpec,
    k: int,
    avail: dict[str, Any],
    n: int,
    table: ScoreTable,
    sync: SyncCalls,
    executor: Executor | None,
) -> None:
    try:
        result = list(await _call(spec, avail, sync, executor))
        if len(result) != n:
            raise RewardError(f"returned {len(result)} scores for {n} rollouts")
    except Exception as e:
        for i in range(n):
            table.fail(i, k, spec.name, e)
        return
    for i, value in enumerate(result):
        table.record(i, k, spec.name, value)


def _call(
    spec: RewardSpec, avail: dict[str, Any], sync: SyncCalls, executor: Executor | None
) -> Awaitable[Any]:
    kwargs = spec.call.select(avail)
    if spec.call.is_async:
        return spec.func(**kwargs)  # type: ignore[no-any-return]
    return sync.call(spec.func, kwargs, executor)
