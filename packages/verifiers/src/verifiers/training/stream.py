"""An asynchronous stream of finished, scored rollout groups for an off-policy trainer.

`RolloutStream` keeps up to `max_in_flight` groups (one example, `rollouts_per_example`
rollouts) running through the environment's own rollout and scoring path
(`Environment.run_scored_group`), and yields each group as soon as it has finished: in
completion order, never waiting for the slowest. Every model call is tagged with the policy
version current when it was sent; when the trainer reports a newer version, groups that hold a
call older than `max_off_policy_steps` versions are cancelled (in flight) or dropped (finished
but not yet taken) and their examples are run again.
The version of a call is the one the server reported with its reply when it reports one
(`ModelResponse.policy_version`), so a server still serving old weights is caught. For an
environment whose rollouts run on Ray actors (`verifiers.ray.RayEnvironment`) the send-time
version is the group's launch version (`LaunchTags`), and a stale group's remote run is
cancelled with it.

Nothing is lost or duplicated: every example taken from the source ends up exactly once as a
yielded group, a filtered group (zero reward variance, or every rollout masked), a re-run after
going stale, an error raised to the consumer (samples that cannot be built), or (after
`aclose()`) in `cancelled`. Cancelling a consumer waiting in
`__anext__` leaves running groups and finished ones untouched.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections import Counter, deque
from collections.abc import Awaitable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from verifiers.client import Client, ModelResponse, merge_sampling_args, resolve_client
from verifiers.errors import ConfigError
from verifiers.generation import RolloutSlots, rollout_gc
from verifiers.training.difficulty import DifficultyFilter
from verifiers.training.groups import RolloutGroup, build_group
from verifiers.training.samples import TOKEN_SAMPLING_ARGS, Truncation, check_truncation
from verifiers.types import SamplingArgs
from verifiers.wrapped_client import WrappedClient

if TYPE_CHECKING:
    from verifiers.envs.environment import Environment


class VersionTaggingClient(WrappedClient):
    """Wraps a group's client: tags each call with the policy version that sampled it.

    That is the version the server reported with the reply (`ModelResponse.policy_version`,
    from the `X-Policy-Version` header) when it sends one, else the stream's version when the
    call was sent. A call still waiting for its reply counts with its send-time version."""

    def __init__(self, inner: Client, stream: RolloutStream) -> None:
        self.inner = inner
        self.base_url = inner.base_url
        self._stream = stream
        self._answered: int | None = None  # oldest version among answered calls
        self._pending: Counter[int] = Counter()  # send-time versions of unanswered calls
        self._by_id: dict[str, int] = {}

    @property
    def oldest(self) -> int | None:
        """Oldest version among answered calls and calls still waiting for a reply."""
        versions = [v for v in self._pending if self._pending[v] > 0]
        if self._answered is not None:
            versions.append(self._answered)
        return min(versions, default=None)

    async def around(self, call: Awaitable[ModelResponse]) -> ModelResponse:
        """Tags the call (text completions too: `message_type="completion"`)."""
        sent = self._stream.policy_version
        self._pending[sent] += 1
        try:
            response = await call
        finally:
            self._pending[sent] -= 1
        version = response.policy_version if response.policy_version is not None else sent
        if self._answered is None or version < self._answered:
            self._answered = version
        if response.id is not None:
            self._by_id[response.id] = version
        return response

    def step_versions(self, rollout: Mapping[str, Any]) -> list[int]:
        """The version of each trajectory step (by response id; the oldest call if unknown)."""
        fallback = self.oldest if self.oldest is not None else self._stream.policy_version
        ids = [(step.get("response") or {}).get("id") for step in rollout.get("trajectory") or ()]
        return [self._by_id.get(i, fallback) if i is not None else fallback for i in ids]


class LaunchTags:
    """Version tags of a group whose model calls are sent by another process (a
    `verifiers.ray.RayEnvironment` actor), where no wrapper sees them being sent.

    A step's version is the one the server reported with its reply (kept on the record's
    `response.policy_version`) when it reports one; otherwise the stream's version when the
    group was launched. That is the oldest version any of the group's calls can have been sent
    at, so the tag is conservative: a group may count as staler than it is, never as fresher.
    While the group runs its oldest version is its launch version."""

    def __init__(self, launched: int) -> None:
        self.launched = launched

    @property
    def oldest(self) -> int:
        return self.launched

    def step_versions(self, rollout: Mapping[str, Any]) -> list[int]:
        versions = []
        for step in rollout.get("trajectory") or ():
            reported = (step.get("response") or {}).get("policy_version")
            versions.append(int(reported) if reported is not None else self.launched)
        return versions


@dataclass(slots=True)
class _Flight:
    row: dict[str, Any]
    index: int
    client: Client  # what the group's rollouts call the model through
    tags: VersionTaggingClient | LaunchTags
    stale: bool = False


class RolloutStream:
    """`async for group in RolloutStream(env, client, model, examples): ...`

    `examples`: dataset rows (any iterable; finite ones end the stream once drained) or a
    `DifficultyFilter`, which then also learns from every finished group. `client`: anything
    `generate` accepts; with several endpoints each group goes to the next one in turn.
    Up to `max_in_flight` groups run at once; no new group starts while `max_buffered`
    (default `max_in_flight`) finished groups wait for the consumer. Call `set_policy_version(v)` after each optimizer step
    (once the inference servers serve the new weights); `max_off_policy_steps=None` disables
    the bound. While it runs (first launch to `aclose()`, which draining it calls) the
    library's collector settings for rollouts apply (`verifiers.generation.rollout_gc`).
    Groups whose rewards have zero variance carry no signal and are skipped (and
    counted in `stats`) unless `filter_zero_variance=False`.
    """

    def __init__(
        self,
        env: Environment,
        client: Any,
        model: str,
        examples: Iterable[Mapping[str, Any]] | DifficultyFilter,
        *,
        rollouts_per_example: int = 8,
        max_in_flight: int = 8,
        max_buffered: int | None = None,
        max_off_policy_steps: int | None = 8,
        policy_version: int = 0,
        sampling_args: SamplingArgs | None = None,
        max_seq_len: int | None = None,
        truncation: Truncation = "keep",
        normalize_std: bool = False,
        filter_zero_variance: bool = True,
        max_concurrent: int = -1,
        max_retries: int = 0,
        state_columns: list[str] | None = None,
    ) -> None:
        if rollouts_per_example < 1 or max_in_flight < 1:
            raise ConfigError("rollouts_per_example and max_in_flight must be at least 1")
        if max_off_policy_steps is not None and max_off_policy_steps < 0:
            raise ConfigError(f"max_off_policy_steps must be >= 0, got {max_off_policy_steps}")
        self.env = env
        self.model = model
        self.rollouts_per_example = rollouts_per_example
        self.max_in_flight = max_in_flight
        self.max_buffered = max_buffered if max_buffered is not None else max_in_flight
        self.max_off_policy_steps = max_off_policy_steps
        self.policy_version = policy_version
        self.max_seq_len = max_seq_len
        self.truncation = check_truncation(truncation)
        self.normalize_std = normalize_std
        self.filter_zero_variance = filter_zero_variance
        self.max_retries = max_retries
        self.state_columns = ["trajectory", *(c for c in state_columns or () if c != "trajectory")]
        self.difficulty = examples if isinstance(examples, DifficultyFilter) else None
        self._source: Iterator[Mapping[str, Any]] = iter(examples)
        self._client, self._owned = resolve_client(client)
        token_args = merge_sampling_args(env.sampling_args, TOKEN_SAMPLING_ARGS)
        self._sampling = merge_sampling_args(token_args, sampling_args)
        self._group_scoring = env.rubric.has_group_funcs
        self._slots = RolloutSlots(max_concurrent) if max_concurrent > 0 else None
        #: rollouts elsewhere (Ray actors): calls are tagged from the records (`LaunchTags`)
        self._tag_calls = env.runs_in_process
        self._in_flight: dict[asyncio.Task[RolloutGroup], _Flight] = {}
        self._ready: deque[tuple[RolloutGroup | BaseException, dict[str, Any]]] = deque()
        self._requeued: deque[dict[str, Any]] = deque()
        self._wakeup = asyncio.Event()
        self._group_index = itertools.count()
        self._auto_id = itertools.count()
        self._exhausted = False
        self._checked = False
        self._closed = False
        #: the run's collector settings (`rollout_gc`): from the first launch to `aclose()`
        self._gc = contextlib.ExitStack()
        #: examples whose groups were cancelled by `aclose()` (or waiting for a re-run then)
        self.cancelled: list[dict[str, Any]] = []
        self.stats: dict[str, int] = {
            "launched_groups": 0,
            "yielded_groups": 0,
            "yielded_rollouts": 0,
            "masked_rollouts": 0,
            "zero_variance_groups": 0,
            "all_masked_groups": 0,
            "stale_cancelled_groups": 0,
            "stale_dropped_groups": 0,
            "cancelled_groups": 0,
            "failed_groups": 0,  # raised to the consumer (e.g. a TrainingDataError)
        }

    # -- the trainer's side ----------------------------------------------------------------
    def set_policy_version(self, version: int) -> None:
        """The trainer has a new policy; enforce the staleness bound on running groups."""
        if version < self.policy_version:
            raise ConfigError(f"policy version went back from {self.policy_version} to {version}")
        self.policy_version = version
        if self.max_off_policy_steps is None:
            return
        for task, flight in self._in_flight.items():
            if not flight.stale and self._too_old(flight.tags.oldest):
                flight.stale = True
                task.cancel()

    @property
    def in_flight(self) -> int:
        return len(self._in_flight)

    @property
    def buffered(self) -> int:
        return len(self._ready)

    def __aiter__(self) -> RolloutStream:
        return self

    async def __anext__(self) -> RolloutGroup:
        while True:
            while self._ready:
                item, row = self._ready.popleft()
                if isinstance(item, BaseException):
                    self.stats["failed_groups"] += 1
                    self._top_up()
                    raise item
                if self._too_old(item.oldest_version):
                    self.stats["stale_dropped_groups"] += 1
                    (self.cancelled if self._closed else self._requeued).append(row)
                    continue
                self.stats["yielded_groups"] += 1
                self.stats["yielded_rollouts"] += len(item.rollouts)
                self._top_up()
                return item
            self._top_up()
            if not self._in_flight:
                await self.aclose()  # the source is drained: release what the stream owns
                raise StopAsyncIteration
            self._wakeup.clear()
            await self._wakeup.wait()

    async def aclose(self) -> None:
        """Stop starting groups and cancel running ones (their examples go to `cancelled`).
        Groups that had already finished are still yielded by further iteration."""
        if self._closed:
            return
        self._closed = True
        tasks = list(self._in_flight)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)
            await asyncio.sleep(0)  # let the done callbacks run
        self.cancelled.extend(self._requeued)
        self._requeued.clear()
        self._wakeup.set()
        try:
            if self._owned:
                await self._client.aclose()
        finally:
            self._gc.close()

    async def __aenter__(self) -> RolloutStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- scheduling ------------------------------------------------------------------------
    def _too_old(self, version: int | None) -> bool:
        if version is None or self.max_off_policy_steps is None:
            return False
        return self.policy_version - version > self.max_off_policy_steps

    def _next_row(self) -> dict[str, Any] | None:
        if self._requeued:
            return self._requeued.popleft()
        if self._exhausted:
            return None
        try:
            row = next(self._source)
        except StopIteration:
            self._exhausted = True
            return None
        row = dict(row)
        if "example_id" not in row:
            row["example_id"] = next(self._auto_id)
        return row

    def _top_up(self) -> None:
        while (
            not self._closed
            and len(self._in_flight) < self.max_in_flight
            and len(self._ready) < self.max_buffered
        ):
            row = self._next_row()
            if row is None:
                return
            self._launch(row)

    def _launch(self, row: dict[str, Any]) -> None:
        if not self._checked:
            self.env.rubric.check_parameters(row.keys())
            self.env.executor  # noqa: B018 - worker threads for sync user code, created once
            in_flight = self.max_in_flight * self.rollouts_per_example
            if self._slots is not None:
                in_flight = min(in_flight, self._slots.limit)
            self._gc.enter_context(rollout_gc(in_flight))
            self._checked = True
        index = next(self._group_index)
        client = self._client.for_group(index)
        if self._tag_calls:
            tagging = VersionTaggingClient(client, self)
            flight = _Flight(row, index, tagging, tagging)
        else:
            flight = _Flight(row, index, client, LaunchTags(self.policy_version))
        task = asyncio.get_running_loop().create_task(self._run(flight))
        self._in_flight[task] = flight
        task.add_done_callback(self._done)
        self.stats["launched_groups"] += 1

    async def _run(self, flight: _Flight) -> RolloutGroup:
        rows = [{**flight.row, "rollout_index": j} for j in range(self.rollouts_per_example)]
        outputs = await self.env.run_scored_group(
            rows,
            flight.client,
            self.model,
            self._sampling,
            group_scoring=self._group_scoring,
            rollout_slots=self._slots,
            max_retries=self.max_retries,
            state_columns=self.state_columns,
        )
        versions = [flight.tags.step_versions(out) for out in outputs]
        for out, steps in zip(outputs, versions, strict=True):
            out["policy_versions"] = steps  # type: ignore[typeddict-unknown-key]
        return build_group(
            outputs,
            max_seq_len=self.max_seq_len,
            truncation=self.truncation,
            normalize_std=self.normalize_std,
            policy_versions=versions,
            index=flight.index,
        )

    def _done(self, task: asyncio.Task[RolloutGroup]) -> None:
        flight = self._in_flight.pop(task)
        if task.cancelled():
            if flight.stale:
                self.stats["stale_cancelled_groups"] += 1
                (self.cancelled if self._closed else self._requeued).append(flight.row)
            else:
                self.stats["cancelled_groups"] += 1
                self.cancelled.append(flight.row)
        elif task.exception() is not None:
            self._ready.append((task.exception(), flight.row))  # type: ignore[arg-type]
        else:
            self._accept(task.result(), flight.row)
        self._wakeup.set()
        self._top_up()

    def _accept(self, group: RolloutGroup, row: dict[str, Any]) -> None:
        self.stats["masked_rollouts"] += sum(group.masked)
        keep = not group.zero_variance
        if self.difficulty is not None:
            valid = [r for r, m in zip(group.rewards, group.masked, strict=True) if not m]
            keep = self.difficulty.observe(group.example_id, valid)
        if group.all_masked:
            self.stats["all_masked_groups"] += 1
            return
        if not keep:
            self.stats["zero_variance_groups"] += 1
            if self.filter_zero_variance:
                return
        self._ready.append((group, row))
