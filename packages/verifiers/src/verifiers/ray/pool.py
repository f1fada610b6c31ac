"""The pool of environment worker actors behind a `RayEnvironment`.

It places `workers_per_node` actors on every alive node that offers the requested resources
and carries the requested labels (each pinned to its node), starts actors on nodes that join
(looked for at most every `refresh_interval` seconds while groups are dispatched), drops
actors that died or whose node left, and gives each group to the least-loaded ready actor,
never more than `max_groups_per_worker` at once per actor: groups beyond that wait here, in
the orchestrator, so Ray's queues stay bounded.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from verifiers.errors import ConfigError, WorkerLostError
from verifiers.utils.config_files import reject_unknown_fields

logger = logging.getLogger("verifiers.ray")
#: seconds the workers get to release their environments (sandboxes, say) when the pool closes
CLOSE_TIMEOUT = 10.0
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class Placement:
    """Where and how many environment workers run.

    `num_cpus` and `resources` are Ray resources each actor holds (`{"sandbox": 1}`);
    `labels` must all be among a node's labels (`ray start --labels`); `workers_per_node`
    actors per matching node (fewer where the node's resources hold fewer);
    `max_groups_per_worker` groups run at once on one actor's event loop."""

    workers_per_node: int = 1
    num_cpus: float = 1.0
    resources: Mapping[str, float] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    max_groups_per_worker: int = 64

    def __post_init__(self) -> None:
        if self.workers_per_node < 1 or self.max_groups_per_worker < 1:
            raise ConfigError("workers_per_node and max_groups_per_worker must be at least 1")
        if self.num_cpus < 0 or any(v < 0 for v in self.resources.values()):
            raise ConfigError("num_cpus and resources must not be negative")

    def with_overrides(self, overrides: Mapping[str, Any], where: str) -> Placement:
        reject_unknown_fields(overrides, (f.name for f in fields(self)), where, "placement")
        return replace(self, **overrides)

    def fits_on(self, node: Mapping[str, Any]) -> int:
        """How many workers this node takes: 0 when it is dead, lacks a label or a resource."""
        if not node.get("Alive"):
            return 0
        labels = node.get("Labels") or {}
        if any(labels.get(k) != v for k, v in self.labels.items()):
            return 0
        total = node.get("Resources") or {}
        need = {**self.resources, **({"CPU": self.num_cpus} if self.num_cpus else {})}
        count = self.workers_per_node
        for name, amount in need.items():
            if amount > 0:
                count = min(count, math.floor(total.get(name, 0.0) / amount + 1e-9))
        return max(count, 0)


@dataclass(eq=False)
class Worker:
    """One actor of the pool: `ready` once its environment has loaded."""

    handle: Any
    node_id: str
    number: int
    ready_ref: Any = None
    started: float = 0.0
    ready: bool = False
    dead: bool = False
    load: int = 0  # groups dispatched to it and not yet returned


class ActorPool:
    """Actors made by `start(node_id)` on the nodes `placement` fits (see the module doc).

    `acquire()` returns the least-loaded ready worker (waiting for a free one); `release()`
    gives its slot back; `lost()` drops a worker whose actor died. When no worker is alive,
    `acquire` waits up to `placement_timeout` seconds for one to start (a node joining, an
    actor replacing a lost one), then raises `WorkerLostError`."""

    def __init__(
        self,
        start: Callable[[str], Any],
        placement: Placement,
        *,
        name: str = "environment",
        placement_timeout: float = 120.0,
        refresh_interval: float = 1.0,
    ) -> None:
        from verifiers.ray.cluster import require_ray

        self._ray = require_ray()
        self._start = start
        self.placement = placement
        self.name = name
        self.placement_timeout = placement_timeout
        self.refresh_interval = refresh_interval
        self.workers: list[Worker] = []
        self._numbers = itertools.count()
        self._next_refresh = 0.0
        self._cooldown: dict[str, float] = {}  # node -> monotonic time it may be tried again
        self._start_failures: dict[str, str] = {}  # node -> why its worker could not start
        self._load_errors: dict[str, str] = {}  # node -> the error loading the environment
        self._changed: asyncio.Event | None = None  # set when a worker frees or changes
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False

    # -- placement -----------------------------------------------------------------------
    def refresh(self, force: bool = False) -> None:
        """Drop workers of nodes that left; start workers on nodes that lack them (at most
        every `refresh_interval` seconds unless `force`)."""
        now = time.monotonic()
        if self._closed or (not force and now < self._next_refresh):
            return
        self._next_refresh = now + self.refresh_interval
        nodes = self._ray.nodes()
        alive = {n["NodeID"] for n in nodes if n.get("Alive")}
        for worker in self.workers:
            if not worker.dead and worker.node_id not in alive:
                self._drop(worker, "its node left the cluster")
        for node in nodes:
            node_id = node["NodeID"]
            want = self.placement.fits_on(node)
            if not want or self._cooldown.get(node_id, 0.0) > now:
                continue
            have = sum(1 for w in self.workers if w.node_id == node_id and not w.dead)
            for _ in range(want - have):
                self._launch(node_id, now)

    def _launch(self, node_id: str, now: float) -> None:
        handle = self._start(node_id)
        worker = Worker(handle, node_id, next(self._numbers), handle.info.remote(), now)
        self.workers.append(worker)
        logger.debug("%s pool: starting worker %d on node %s", self.name, worker.number, node_id)

    def poll_starting(self) -> None:
        """Mark workers whose environment has loaded ready; give up on those that failed to
        start or could not be placed within `placement_timeout`."""
        starting = [w for w in self.workers if not w.ready and not w.dead]
        if not starting:
            return
        refs = [w.ready_ref for w in starting]
        done, _ = self._ray.wait(refs, num_returns=len(refs), timeout=0)
        finished = set(done)
        now = time.monotonic()
        for worker in starting:
            if worker.ready_ref in finished:
                try:
                    self._ray.get(worker.ready_ref)
                except Exception as e:  # its environment failed to load, or its node left
                    reason = short_error(e)
                    self._start_failures[worker.node_id] = reason
                    if getattr(e, "actor_init_failed", False):
                        self._load_errors[worker.node_id] = reason
                    self._cooldown[worker.node_id] = now + self.placement_timeout
                    self._drop(worker, f"it failed to start: {reason}")
                    continue
                worker.ready = True
                self._start_failures.pop(worker.node_id, None)
                self._load_errors.pop(worker.node_id, None)
                self._wake()
            elif now - worker.started > self.placement_timeout:
                self._cooldown[worker.node_id] = now + self.placement_timeout
                self._drop(worker, f"it was not placed within {self.placement_timeout:g}s")

    # -- dispatch ------------------------------------------------------------------------
    async def acquire(self) -> Worker:
        """The least-loaded ready worker with a free slot (its load counted), waiting while
        every worker is busy or starting."""
        loop = asyncio.get_running_loop()
        if self._changed is None or self._loop is not loop:  # evaluate_sync: a loop per run
            self._changed, self._loop = asyncio.Event(), loop
        cap = self.placement.max_groups_per_worker
        empty_since: float | None = None
        while True:
            self.refresh()
            self.poll_starting()
            live = [w for w in self.workers if not w.dead]
            free = [w for w in live if w.ready and w.load < cap]
            if free:
                worker = min(free, key=lambda w: (w.load, w.number))
                worker.load += 1
                return worker
            now = time.monotonic()
            if any(w.ready for w in live):
                empty_since = None
            else:  # none up: actors still starting count against the same bounded wait
                empty_since = empty_since if empty_since is not None else now
                # an environment that failed to load will not load on waiting: fail now
                failed_to_load = (
                    bool(self._load_errors) and not live and not self._cooldown_over(now)
                )
                if failed_to_load or now - empty_since >= self.placement_timeout or self._closed:
                    raise WorkerLostError(self._none_placed())
            starting = any(not w.ready for w in live)
            self._changed.clear()
            try:
                await asyncio.wait_for(
                    self._changed.wait(), 0.1 if starting else self.refresh_interval
                )
            except TimeoutError:
                pass

    def release(self, worker: Worker) -> None:
        worker.load -= 1
        self._wake()

    def lost(self, worker: Worker, error: BaseException) -> None:
        """The worker's actor died (killed, crashed, or its node left)."""
        if not worker.dead:
            self._drop(worker, short_error(error))
        self._next_refresh = 0.0  # look for a replacement at the next dispatch

    def _drop(self, worker: Worker, why: str) -> None:
        worker.dead = True
        logger.warning("%s pool: worker on node %s lost: %s", self.name, worker.node_id, why)
        try:
            self._ray.kill(worker.handle, no_restart=True)
        except Exception:  # already gone with its node
            pass
        self._wake()

    def _wake(self) -> None:
        if self._changed is not None:
            self._changed.set()

    def _cooldown_over(self, now: float) -> bool:
        """Whether a node whose worker failed to load may be tried again already."""
        return any(self._cooldown.get(n, 0.0) <= now for n in self._load_errors)

    def _none_placed(self) -> str:
        if self._load_errors:
            errors = "; ".join(f"node {n[:12]}: {r}" for n, r in self._load_errors.items())
            return f"no {self.name} worker could load the environment ({errors})"
        p = self.placement
        wanted = {**p.resources, "CPU": p.num_cpus}
        msg = (
            f"no {self.name} worker came up within {self.placement_timeout:g}s: no alive "
            f"node had {wanted} free" + (f" with labels {dict(p.labels)}" if p.labels else "")
        )
        if self._start_failures:
            failures = "; ".join(f"{n[:12]}: {r}" for n, r in self._start_failures.items())
            msg += f" (workers failed to start: {failures})"
        return msg

    async def aclose(self) -> None:
        """Let every worker release its environment (bounded), then end the actors."""
        self._closed = True
        live = [w for w in self.workers if not w.dead and w.ready]
        if live:
            refs = [w.handle.aclose.remote() for w in live]
            try:
                await asyncio.wait_for(
                    asyncio.gather(*refs, return_exceptions=True), timeout=CLOSE_TIMEOUT
                )
            except TimeoutError:
                logger.warning("%s pool: workers did not close in %gs", self.name, CLOSE_TIMEOUT)
        for worker in self.workers:
            if not worker.dead:
                worker.dead = True
                try:
                    self._ray.kill(worker.handle, no_restart=True)
                except Exception:
                    pass
        self._wake()


def short_error(error: BaseException) -> str:
    """One line about `error`; for an actor whose creation failed, the exception it raised
    (the last line of Ray's message) beside Ray's first line."""
    text = _ANSI.sub("", str(error))  # Ray colours the actor's name in its messages
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return type(error).__name__
    text = lines[0] if len(lines) == 1 else f"{lines[0]} ... {lines[-1]}"
    return f"{type(error).__name__}: {text}"[:500]
