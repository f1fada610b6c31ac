"""Running many rollouts: bounded concurrency, group scoring, streaming results to disk."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import operator
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from itertools import groupby, repeat
from typing import Any, Protocol

from verifiers.client import Client, merge_sampling_args, resolve_client
from verifiers.dataset import check_columns
from verifiers.errors import ConfigError
from verifiers.results import ResultsWriter, summarize, write_metadata
from verifiers.rubrics.rubric import set_advantages
from verifiers.state import State
from verifiers.types import GenerateOutputs, RolloutOutput, SamplingArgs

logger = logging.getLogger("verifiers")


# -- the cyclic garbage collector during a run ---------------------------------------------
# Rollouts allocate many short-lived containers, so with the default thresholds (700, 10, 10)
# the collector runs every few rollouts and re-scans every in-flight and finished rollout, and
# each full collection walks the whole import-time heap: CPU per rollout then grows with
# concurrency. For the duration of a run the library freezes what already exists (it lives
# for the whole run) and makes young collections rarer; both are undone when the last run
# in the process ends. Cycles made during the run are still collected.
RUN_GC_THRESHOLD = (50_000, 20)  # gen-0 allocations, gen-0 collections per gen-1 collection
#: gen-0 allocations per rollout in flight: a young collection walks every young object still
#: alive, i.e. about every in-flight rollout's, so with a fixed threshold the collector's cost
#: per rollout grows with concurrency; scaling the threshold with it keeps that cost flat.
GC_ALLOCATIONS_PER_ROLLOUT = 200
_run_gc_lock = threading.Lock()
_run_gc_depth = 0
_run_gc_saved: tuple[tuple[int, int, int], bool] | None = None


@contextlib.contextmanager
def rollout_gc(in_flight: int = 0) -> Iterator[None]:
    """The collector settings for a run of rollouts (`evaluate`, `generate`, `RolloutStream`,
    env servers); nests and overlaps (one process-wide count). `in_flight` is the run's
    rollout concurrency, when it has a bound: young collections get rarer with it. On the way
    out of the last one the thresholds are restored and, if this entry froze the heap, it is
    unfrozen.

    Left alone: a collector the caller disabled or set to 0, and a heap someone else (e.g.
    `vf-eval`) already froze; their owner decides."""
    global _run_gc_depth, _run_gc_saved
    with _run_gc_lock:
        current = gc.get_threshold()
        if _run_gc_depth == 0:
            freeze = gc.isenabled() and gc.get_freeze_count() == 0
            if freeze:
                gc.freeze()
            _run_gc_saved = (current, freeze)
        if gc.isenabled() and current[0] > 0:
            young = max(RUN_GC_THRESHOLD[0], GC_ALLOCATIONS_PER_ROLLOUT * max(0, in_flight))
            gc.set_threshold(
                max(current[0], young), max(current[1], RUN_GC_THRESHOLD[1]), current[2]
            )
        _run_gc_depth += 1
    try:
        yield
    finally:
        with _run_gc_lock:
            _run_gc_depth -= 1
            if _run_gc_depth == 0 and _run_gc_saved is not None:
                before, froze = _run_gc_saved
                _run_gc_saved = None
                gc.set_threshold(*before)
                if froze:
                    gc.unfreeze()


def normalize_inputs(inputs: Any) -> list[dict[str, Any]]:
    """Rows from a `datasets.Dataset`, a list of dicts, or a dict of columns."""
    if hasattr(inputs, "to_list") and hasattr(inputs, "column_names"):
        return inputs.to_list()
    if isinstance(inputs, dict):
        columns = {k: list(v) for k, v in inputs.items()}
        lengths = {len(v) for v in columns.values()}
        if len(lengths) > 1:
            raise ConfigError(f"input columns have different lengths: {sorted(lengths)}")
        n = lengths.pop() if lengths else 0
        return [{k: v[i] for k, v in columns.items()} for i in range(n)]
    if isinstance(inputs, list):
        for r in inputs:  # a plain loop: no generator step per row
            if not isinstance(r, dict):
                raise ConfigError("inputs must be dicts (one per rollout)")
        return inputs
    raise ConfigError(f"unsupported inputs of type {type(inputs).__name__}")


_RECORD_ORDER = operator.itemgetter("example_id", "rollout_index")
_EXAMPLE_ID = operator.itemgetter("example_id")


def sort_outputs(outputs: list[RolloutOutput]) -> None:
    """In example and rollout order (a missing index counts as 0). Records that hold both
    keys, as `output_record` writes them, are sorted without a Python call per record."""
    try:
        outputs.sort(key=_RECORD_ORDER)  # type: ignore[arg-type]
    except KeyError:  # `sort` leaves the list as it was when a key cannot be made
        outputs.sort(key=lambda o: (o.get("example_id", 0), o.get("rollout_index", 0)))


def group_inputs(rows: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Consecutive rows with the same `example_id` form one group (rollouts of one example)."""
    if all(map(operator.contains, rows, repeat("example_id"))) and all(
        map(operator.contains, rows, repeat("rollout_index"))
    ):  # rows `eval_inputs` made: grouped in C, without a Python step per row
        return [list(group) for _, group in groupby(rows, _EXAMPLE_ID)]
    groups: list[list[dict[str, Any]]] = []
    for i, row in enumerate(rows):
        if "example_id" not in row:
            row = {**row, "example_id": i}
        if groups and groups[-1][0]["example_id"] == row["example_id"]:
            group = groups[-1]
        else:
            group = []
            groups.append(group)
        if "rollout_index" not in row:
            row = {**row, "rollout_index": len(group)}
        group.append(row)
    return groups


class GroupRunner(Protocol):
    """What running rollouts needs of an environment (`verifiers.Environment` is one, with
    these methods' full signatures; this module does not import it, so the environment can
    import this one)."""

    rubric: Any
    sampling_args: SamplingArgs
    env_id: str
    env_args: dict[str, Any]
    pass_threshold: float

    @property
    def executor(self) -> Any: ...
    @property
    def run_scored_group(self) -> Callable[..., Awaitable[list[RolloutOutput]]]: ...
    @property
    def rollout_state(self) -> Callable[..., Awaitable[State]]: ...
    @property
    def score_states(self) -> Callable[..., Awaitable[None]]: ...
    @property
    def state_to_output(self) -> Callable[..., RolloutOutput]: ...


async def run_generation(
    env: GroupRunner,
    inputs: Any,
    client: Any,
    model: str,
    *,
    sampling_args: SamplingArgs | None = None,
    max_concurrent: int = -1,
    results_path: Any = None,
    state_columns: list[str] | None = None,
    independent_scoring: bool = False,
    max_retries: int = 0,
    on_progress: Callable[..., Any] | None = None,
    on_start: Callable[..., Any] | None = None,
    on_log: Callable[[str], Any] | None = None,
    metadata: dict[str, Any] | None = None,
) -> GenerateOutputs:
    with rollout_gc(max_concurrent):
        return await _run_generation(
            env,
            inputs,
            client,
            model,
            sampling_args=sampling_args,
            max_concurrent=max_concurrent,
            results_path=results_path,
            state_columns=state_columns,
            independent_scoring=independent_scoring,
            max_retries=max_retries,
            on_progress=on_progress,
            on_start=on_start,
            on_log=on_log,
            metadata=metadata,
        )


def run_lanes(limit: int, groups: list[list[dict[str, Any]]]) -> tuple[int, RolloutSlots | None]:
    """How many groups run at once ("lanes", each running one group after another) and the
    rollout slots they share, for a `max_concurrent` of `limit` (0: no bound).

    One rollout per group: the lanes are the only limiter (no semaphore, no task per group).
    Larger groups share `limit` rollout slots, with lanes for about two slot-fulls of groups,
    so a group waiting for its last rollout does not leave slots idle."""
    if not limit:
        return max(1, len(groups)), None
    rollouts = sum(map(len, groups))
    if rollouts == len(groups):
        return min(limit, max(1, len(groups))), None
    group_size = max(1, rollouts // max(1, len(groups)))
    return max(2, 2 * limit // group_size + 1), RolloutSlots(limit)


async def _run_generation(
    env: GroupRunner,
    inputs: Any,
    client: Any,
    model: str,
    *,
    sampling_args: SamplingArgs | None,
    max_concurrent: int,
    results_path: Any,
    state_columns: list[str] | None,
    independent_scoring: bool,
    max_retries: int,
    on_progress: Callable[..., Any] | None,
    on_start: Callable[..., Any] | None,
    on_log: Callable[[str], Any] | None,
    metadata: dict[str, Any] | None,
) -> GenerateOutputs:
    rows = normalize_inputs(inputs)
    if rows:
        check_columns(list(rows[0]), "inputs")
        try:
            env.rubric.check_parameters(rows[0].keys())
        except ConfigError as e:
            # As upstream, the rollouts still run; each records the reward function's failure.
            logger.warning("%s: its rollouts will record this as a reward error", e)
    groups = group_inputs(rows)
    model_client, owned = resolve_client(client)
    sampling = merge_sampling_args(env.sampling_args, sampling_args)
    group_scoring = needs_group_scoring(env.rubric) and not independent_scoring
    env.executor  # noqa: B018 - create the worker threads (and hand them to the rubric) once
    writer = ResultsWriter(results_path) if results_path is not None else None
    limit = max_concurrent if max_concurrent and max_concurrent > 0 else 0
    lanes, rollout_slots = run_lanes(limit, groups)
    outputs: list[RolloutOutput] = []
    start = time.perf_counter()

    if on_start is not None:
        _safe(on_start, rows, rows)

    def emit(batch: list[RolloutOutput]) -> None:
        outputs.extend(batch)
        if writer is not None:
            writer.write(batch)
        if on_progress is not None:
            _safe(on_progress, outputs, batch)

    pending = iter(enumerate(groups))  # shared: each lane takes the next group

    async def lane() -> None:
        for index, group in pending:
            await env.run_scored_group(
                group,
                model_client.for_group(index),
                model,
                sampling,
                group_scoring=group_scoring,
                rollout_slots=rollout_slots,
                max_retries=max_retries,
                state_columns=state_columns,
                emit=emit,
            )

    tasks = [asyncio.create_task(lane()) for _ in range(lanes if groups else 0)]
    try:
        if tasks:
            await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        if writer is not None:
            writer.close()
        if owned:
            await model_client.aclose()

    sort_outputs(outputs)
    meta: dict[str, Any] = {
        "env_id": env.env_id,
        "env_args": env.env_args,
        "model": model,
        "base_url": getattr(model_client, "base_url", ""),
        "num_examples": len(groups),
        "rollouts_per_example": max(1, len(rows) // max(1, len(groups))),
        "sampling_args": sampling,
        "time": time.perf_counter() - start,
        **summarize(outputs, env.pass_threshold),
        **(metadata or {}),
    }
    if results_path is not None:
        write_metadata(results_path, meta)
    if on_log is not None:
        _safe(on_log, f"finished {len(outputs)} rollouts in {meta['time']:.1f}s")
    return GenerateOutputs(outputs=outputs, metadata=meta)


class RolloutSlots(asyncio.Semaphore):
    """`max_concurrent`: a semaphore that remembers its limit, so a runner that sends a whole
    group elsewhere (a Ray actor) can take the group's share of slots at once."""

    def __init__(self, limit: int) -> None:
        super().__init__(limit)
        self.limit = limit
        # one taker at a time: two half-served groups never wait on each other
        self._whole = asyncio.Lock()

    async def take(self, n: int) -> int:
        """Take `min(n, limit)` slots for a group that runs elsewhere; returns that count
        (hand it to `give_back` when the group is done)."""
        want = min(n, self.limit)
        taken = 0
        async with self._whole:
            try:
                while taken < want:
                    await self.acquire()
                    taken += 1
            except BaseException:
                self.give_back(taken)
                raise
        return want

    def give_back(self, count: int) -> None:
        for _ in range(count):
            self.release()


async def run_group(
    env: GroupRunner,
    rows: list[dict[str, Any]],
    client: Client,
    model: str,
    sampling: SamplingArgs,
    *,
    group_scoring: bool,
    rollout_slots: asyncio.Semaphore | None = None,
    max_retries: int = 0,
    state_columns: list[str] | None = None,
    emit: Callable[[list[RolloutOutput]], Any] | None = None,
) -> list[RolloutOutput]:
    """Roll out and score the rollouts of one example (a group) on one client.

    With `group_scoring` all rollouts are scored together once they have finished; otherwise
    each is scored (and passed to `emit`) as soon as it finishes. Returns the output records in
    the order of `rows`, with group-relative advantages set."""

    if len(rows) == 1 and rollout_slots is None:  # the common case, without closures
        state = await env.rollout_state(rows[0], client, model, sampling, max_retries)
        await env.score_states([state], group=group_scoring)
        out = env.state_to_output(state, state_columns)
        if emit is not None:
            emit([out])
        if not group_scoring:
            set_advantages([state])
            out["advantage"] = state["advantage"]
        return [out]

    async def one(row: dict[str, Any]) -> State:
        if rollout_slots is None:
            return await env.rollout_state(row, client, model, sampling, max_retries)
        async with rollout_slots:
            return await env.rollout_state(row, client, model, sampling, max_retries)

    if group_scoring:
        if len(rows) == 1:  # no task for a group of one (gather makes one per rollout)
            states = [await one(rows[0])]
        else:
            states = list(await asyncio.gather(*(one(row) for row in rows)))
        await env.score_states(states, group=True)
        outs = [env.state_to_output(s, state_columns) for s in states]
        if emit is not None:
            emit(outs)
        return outs

    async def one_scored(row: dict[str, Any]) -> tuple[State, RolloutOutput]:
        state = await one(row)
        await env.score_states([state], group=False)
        out = env.state_to_output(state, state_columns)
        if emit is not None:
            emit([out])  # written as soon as it is scored
        return state, out

    if len(rows) == 1:
        pairs = [await one_scored(rows[0])]
    else:
        pairs = list(await asyncio.gather(*(one_scored(row) for row in rows)))
    states = [s for s, _ in pairs]
    set_advantages(states)
    for state, out in pairs:
        out["advantage"] = state["advantage"]
    return [out for _, out in pairs]


def needs_group_scoring(rubric: Any) -> bool:
    """Whether a group's rollouts must be scored together: the rubric has group reward
    functions, or a user subclass overrides `score_group` / `score_rollouts` (upstream scores
    every group through them, so an override must see the whole group)."""
    if rubric.has_group_funcs:
        return True
    for name in ("score_group", "score_rollouts"):
        if name in getattr(rubric, "__dict__", {}):  # assigned on the instance
            return True
        owner = next((k for k in type(rubric).__mro__ if name in k.__dict__), None)
        if owner is not None and not owner.__module__.startswith("verifiers."):
            return True
    return False


def _safe(callback: Callable[..., Any], *args: Any) -> None:
    try:
        callback(*args)
    except Exception as e:  # a broken progress callback must not lose the run
        logger.warning("callback %r failed: %s", callback, e)
