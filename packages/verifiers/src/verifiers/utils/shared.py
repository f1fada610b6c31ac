"""One computation per key, shared by every concurrent caller.

Reward functions and metrics of one rubric often need the same expensive result (a judge
verdict, a sandboxed grading) for the same rollout, and run concurrently; the first caller
starts the work and the others await the same task instead of repeating it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

T = TypeVar("T")

__all__ = ["SharedTasks"]


class SharedTasks(Generic[T]):
    """In-flight tasks by key: `run(key, make)` awaits the running task for ``key`` if there is
    one (on this event loop), else starts ``make()``. Each waiter is shielded: cancelling one
    caller does not cancel the result the others wait for. Finished tasks are forgotten, so
    callers keep results they want to reuse (e.g. in the rollout state) themselves."""

    def __init__(self) -> None:
        self._tasks: dict[Hashable, asyncio.Task[T]] = {}

    def __len__(self) -> int:
        return len(self._tasks)

    async def run(self, key: Hashable, make: Callable[[], Awaitable[T]]) -> T:
        task = self._tasks.get(key)
        if task is None or task.get_loop() is not asyncio.get_running_loop():
            task = asyncio.ensure_future(make())
            self._tasks[key] = task
            task.add_done_callback(lambda t: self._forget(key, t))
        return await asyncio.shield(task)

    def _forget(self, key: Hashable, task: asyncio.Task[T]) -> None:
        if self._tasks.get(key) is task:
            del self._tasks[key]
        if not task.cancelled():
            task.exception()  # retrieved: a result nobody awaits any more is not "lost"
