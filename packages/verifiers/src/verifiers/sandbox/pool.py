"""A warm pool: sandboxes started ahead of demand and handed out in microseconds.

A sandbox handed out is never taken back: `release` closes it and the pool starts a fresh one
(recycle, don't share), so nothing a rollout did can leak into the next."""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from verifiers.sandbox.base import Provider, Sandbox, SandboxSpec

logger = logging.getLogger("verifiers.sandbox")

T = TypeVar("T")


class SandboxPool:
    """Keeps `size` started sandboxes of one spec. Bound to the event loop it first runs in;
    used from another loop (a second `asyncio.run`), it drops the old loop's sandboxes first."""

    def __init__(
        self,
        provider: Provider,
        spec: SandboxSpec | None = None,
        size: int = 4,
        max_starting: int = 4,
    ) -> None:
        self.provider = provider
        self.spec = spec or SandboxSpec()
        self.size = size
        self.max_starting = max(1, max_starting)
        self._warm: collections.deque[Sandbox] = collections.deque()
        self._starting = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False
        self.hits = 0
        self.misses = 0
        self.failures = 0
        self._failing_until = 0.0

    def _bind(self) -> None:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            stale = list(self._warm)
            self._warm.clear()
            for box in stale:  # their pipes belong to a closed loop: kill without awaiting
                kill = getattr(box, "kill_now", None)
                if kill is not None:
                    kill()
            self._tasks.clear()
            self._starting = 0
            self._loop = loop

    async def start(self) -> None:
        """Begin filling the pool (returns at once)."""
        self._closed = False
        self._bind()
        self._refill()

    def _refill(self) -> None:
        if self._closed or time.monotonic() < self._failing_until:
            return
        while len(self._warm) + self._starting < self.size and self._starting < self.max_starting:
            self._starting += 1
            task = asyncio.get_running_loop().create_task(self._start_one())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _start_one(self) -> None:
        try:
            box = await self.provider.create(self.spec)
        except Exception as e:
            self.failures += 1
            self._failing_until = time.monotonic() + 1.0  # don't spin on a broken provider
            logger.warning("warm pool: starting a sandbox failed: %s", e)
            return
        finally:
            self._starting -= 1
        if self._closed:
            await box.close()
            return
        self._warm.append(box)
        self._refill()

    async def acquire(self) -> Sandbox:
        """A fresh sandbox: a warm one if ready, else one started now."""
        self._closed = False
        self._bind()
        while self._warm:
            box = self._warm.popleft()
            if box.alive:
                self.hits += 1
                self._refill()
                return box
            await box.close()
        self.misses += 1
        self._refill()
        return await self.provider.create(self.spec)

    async def release(self, box: Sandbox) -> None:
        """Close a sandbox that was handed out (it is never reused) and top the pool up."""
        await box.close()
        if self._loop is asyncio.get_running_loop():
            self._refill()

    @property
    def warm(self) -> int:
        return len(self._warm)

    async def wait_warm(self, n: int | None = None, timeout: float = 30.0) -> None:  # noqa: ASYNC109
        """Wait until `n` (default: size) sandboxes are warm; for tests and benchmarks."""
        n = self.size if n is None else n
        deadline = time.monotonic() + timeout
        while len(self._warm) < n and time.monotonic() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.005)

    async def close(self) -> None:
        """Close the warm sandboxes and stop starting new ones."""
        self._closed = True
        tasks = list(self._tasks)
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        boxes = list(self._warm)
        self._warm.clear()
        await asyncio.gather(*(b.close() for b in boxes), return_exceptions=True)


class InUse:
    """Counts the calls in flight that use a warm pool (an environment's `generate` calls);
    when the last one returns, `on_idle` runs, shielded: the pool's sandboxes belong to the
    calls' event loop, and nothing should idle after the last call."""

    def __init__(self, on_idle: Callable[[], Awaitable[None]]) -> None:
        self.on_idle = on_idle
        self.calls = 0

    async def run(self, call: Awaitable[T]) -> T:
        self.calls += 1
        try:
            return await call
        finally:
            self.calls -= 1
            if self.calls == 0:
                await asyncio.shield(self.on_idle())
