"""Worker threads for an environment's sync user code (tools, hooks, reward functions), so
it never blocks the event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol


class ThreadedEnv(Protocol):
    max_workers: int
    rubric: Any

    @property
    def executor(self) -> Any: ...


class UserThreads:
    """One environment's thread pool: made on first use with the environment's
    `max_workers` at that time (`set_concurrency` may raise it before) and handed to its
    rubric, which scores with it."""

    def __init__(self, env: ThreadedEnv) -> None:
        self.env = env
        self.pool: ThreadPoolExecutor | None = None

    def executor(self) -> ThreadPoolExecutor:
        if self.pool is None:
            self.pool = ThreadPoolExecutor(
                max_workers=self.env.max_workers, thread_name_prefix="vf-user"
            )
            self.env.rubric.executor = self.pool
        return self.pool

    async def run_sync(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run sync user code in a worker thread, keeping the event loop free."""
        loop = asyncio.get_running_loop()
        pool = self.env.executor  # the environment's (a subclass may provide its own)
        if kwargs:
            return await loop.run_in_executor(pool, lambda: func(*args, **kwargs))
        return await loop.run_in_executor(pool, func, *args)

    def shutdown(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = None
