"""Sync reward functions off the event loop where it matters, without a thread hop per call.

A slow sync reward function must not run on the event loop (it would stall every other
rollout), but a hop to a worker thread costs more CPU than a cheap function itself (the hop,
the GIL hand-over and the wake-up: about a sixth of a single-turn rollout's client CPU). So
each function's calls are measured, and by the slower of its last two (one call that came
back at once, say the second of two that waited for each other, does not make it cheap):

- not yet measured: its own hop (the call measures it);
- under `inline_below_s` (0.2 ms, and under `slow_after_s`): run right on the loop's thread,
  as upstream ran every sync function; one call that takes longer sends the next ones back to
  threads;
- under `slow_after_s` (2 ms): queued and carried to a worker in batches, every call made in
  one turn of the loop in one hop (once `max_batches` are out, further calls wait for one to
  come back);
- slower: a hop of its own per call, so slow ones (a judge asked the 0.1.2 way, a code runner
  in a subprocess) run side by side. As several batches can be out at once, a cheap function
  that turns slow on one input holds up only the calls in its own batch.

Upstream ran sync functions on the loop's thread, and some rely on that: `signal.alarm`
timeouts (math-verify's `parse`/`verify`, hand-written code runners) only work in the main
thread. A function that fails in a worker for that reason is run again on the loop's thread,
and from then on always there (with a warning, once).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any

Call = tuple[Callable[..., Any], dict[str, Any]]
_SETTINGS = ("logger", "inline_below_s", "slow_after_s", "max_batches")
# Outcome of one call in a worker: (True, value) or (False, exception).
Outcome = tuple[bool, Any]


class SyncCalls:
    """Runs a rubric's sync reward functions: the cheapest on the loop, the others in worker
    threads, batched unless they are slow."""

    def __init__(
        self,
        logger: logging.Logger,
        *,
        inline_below_s: float = 0.0002,
        slow_after_s: float = 0.002,
        max_batches: int = 4,
    ) -> None:
        self.logger = logger
        self.max_batches = max_batches  # batches out at once, per event loop
        self.hops = 0  # worker-thread hops made (each batch is one)
        # per function: (the function, the slower of its last two calls, its last call)
        self._seconds: dict[int, tuple[Callable[..., Any], float, float]] = {}
        self._cheap: dict[int, Callable[..., Any]] = {}  # measured under both bars
        self._on_loop: dict[int, Callable[..., Any]] = {}  # pinned to the loop's thread
        self._lanes = threading.local()  # this thread's event loop's queue
        self._inline_below_s = inline_below_s  # calls shorter: on the loop next time
        self._slow_after_s = slow_after_s  # a call this long or longer: its own hop next time
        self._cheap_below = min(inline_below_s, slow_after_s)

    @property
    def inline_below_s(self) -> float:
        return self._inline_below_s

    @inline_below_s.setter
    def inline_below_s(self, seconds: float) -> None:
        self._inline_below_s = seconds
        self._rejudge()

    @property
    def slow_after_s(self) -> float:
        return self._slow_after_s

    @slow_after_s.setter
    def slow_after_s(self, seconds: float) -> None:
        self._slow_after_s = seconds
        self._rejudge()

    def _rejudge(self) -> None:
        # new bars: which functions count as cheap, from their measurements so far
        self._cheap_below = below = min(self._inline_below_s, self._slow_after_s)
        self._cheap = {key: f for key, (f, slower, _) in self._seconds.items() if slower < below}

    def __getstate__(self) -> dict[str, Any]:
        # Threads, loops and measurements stay in the process that made them.
        return {k: getattr(self, k) for k in _SETTINGS}

    def __setstate__(self, state: dict[str, Any]) -> None:
        logger = state.pop("logger")
        self.__init__(logger, **state)  # type: ignore[misc]

    def on_loop(self, func: Callable[..., Any]) -> bool:
        """Whether `func` is measured cheap: `call` would run it right on the loop's thread
        (a caller may then run it with `run_on_loop` without awaiting `call`)."""
        return self._cheap.get(id(func)) is func

    def run_measured(self, func: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
        """`func(**kwargs)` here, its time kept for the next decision."""
        started = time.perf_counter()
        try:
            return func(**kwargs)
        finally:
            self._measured(func, time.perf_counter() - started)

    def run_on_loop(self, func: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
        """`run_measured` for a function `on_loop` answers True for. A call under both bars
        leaves its measurements as they were: the slower of its last two calls stays under
        them either way, and so does every later decision (the next slow call is the slower
        of the two whichever quick one it follows)."""
        started = time.perf_counter()
        try:
            return func(**kwargs)
        finally:
            seconds = time.perf_counter() - started
            if seconds >= self._cheap_below:
                self._measured(func, seconds)

    async def call(
        self, func: Callable[..., Any], kwargs: dict[str, Any], executor: Executor | None
    ) -> Any:
        """`func(**kwargs)`: on the loop when measured cheap, else in a worker of `executor`
        (None: the loop's default executor)."""
        if self.on_loop(func):
            value = self.run_on_loop(func, kwargs)  # measured, as in a worker
            return await value if awaitable(value) else value
        if self._on_loop.get(id(func)) is not func:
            try:
                value = await self._in_worker(func, kwargs, executor)
            except ValueError as e:
                if not (_needs_main_thread(e) and _loop_in_main_thread()):
                    raise
                self.logger.warning(
                    "reward function %r needs the main thread (signals); it now runs on the "
                    "event loop's thread: %s",
                    getattr(func, "__name__", func),
                    e,
                )
                self._on_loop[id(func)] = func
            else:
                return await value if awaitable(value) else value
        value = func(**kwargs)
        return await value if awaitable(value) else value

    def _in_worker(
        self, func: Callable[..., Any], kwargs: dict[str, Any], executor: Executor | None
    ) -> asyncio.Future[Any]:
        loop = asyncio.get_running_loop()
        last = self._seconds.get(id(func))
        if last is None or last[0] is not func or last[1] >= self._slow_after_s:
            self.hops += 1
            return loop.run_in_executor(executor, self.run_measured, func, kwargs)
        lane: _Lane | None = getattr(self._lanes, "lane", None)
        if lane is None or lane.loop is not loop:
            lane = self._lanes.lane = _Lane(self, loop)
        lane.executor = executor
        return lane.submit(func, kwargs)

    def _measured(self, func: Callable[..., Any], seconds: float) -> None:
        """Keep the slower of a function's last two calls: one call that came back at once
        (the second of two that waited for each other) does not make it look cheap."""
        key = id(func)
        before = self._seconds.get(key)
        last = before[2] if before is not None and before[0] is func else seconds
        slower = max(seconds, last)
        self._seconds[key] = (func, slower, seconds)
        if slower < self._cheap_below:
            self._cheap[key] = func
        else:
            self._cheap.pop(key, None)

    def run_batch(self, calls: list[Call]) -> list[Outcome]:
        """In a worker thread: each call in order, its outcome kept, never raised."""
        out: list[Outcome] = []
        for func, kwargs in calls:
            started = time.perf_counter()
            try:
                ok, value = True, func(**kwargs)
            except Exception as e:
                ok, value = False, e
            self._measured(func, time.perf_counter() - started)
            out.append((ok, value))
        return out


class _Lane:
    """The calls waiting for a batch on one event loop, and the batches out."""

    __slots__ = ("calls", "executor", "flushing", "futures", "loop", "out", "owner")

    def __init__(self, owner: SyncCalls, loop: asyncio.AbstractEventLoop) -> None:
        self.owner = owner
        self.loop = loop
        self.executor: Executor | None = None
        self.calls: list[Call] = []
        self.futures: list[asyncio.Future[Any]] = []
        self.out = 0  # batches in workers now
        self.flushing = False  # a flush is scheduled for this turn of the loop

    def submit(self, func: Callable[..., Any], kwargs: dict[str, Any]) -> asyncio.Future[Any]:
        future = self.loop.create_future()
        self.calls.append((func, kwargs))
        self.futures.append(future)
        if not self.flushing and self.out < self.owner.max_batches:
            self.flushing = True
            self.loop.call_soon(self.flush)
        return future

    def flush(self) -> None:
        self.flushing = False
        if not self.calls or self.out >= self.owner.max_batches:
            return
        pending = [(c, f) for c, f in zip(self.calls, self.futures, strict=True) if not f.done()]
        self.calls, self.futures = [], []
        if not pending:
            return
        calls, futures = [c for c, _ in pending], [f for _, f in pending]
        self.out += 1
        self.owner.hops += 1
        try:
            batch = self.loop.run_in_executor(self.executor, self.owner.run_batch, calls)
        except Exception as e:  # e.g. an executor already shut down
            self._settle(futures, None, e)
            return
        batch.add_done_callback(lambda done: self._done(futures, done))

    def _done(self, futures: list[asyncio.Future[Any]], done: asyncio.Future[Any]) -> None:
        if done.cancelled():
            self._settle(futures, None, None)
        elif done.exception() is not None:
            self._settle(futures, None, done.exception())
        else:
            self._settle(futures, done.result(), None)
        if self.calls and not self.flushing:
            self.flush()

    def _settle(
        self,
        futures: list[asyncio.Future[Any]],
        outcomes: list[Outcome] | None,
        error: BaseException | None,
    ) -> None:
        self.out -= 1
        for i, future in enumerate(futures):
            if future.done():
                continue  # its caller was cancelled
            if outcomes is None:
                if error is None:
                    future.cancel()
                else:
                    future.set_exception(error)
            elif outcomes[i][0]:
                future.set_result(outcomes[i][1])
            else:
                future.set_exception(outcomes[i][1])


def awaitable(value: Any) -> bool:
    """Whether a sync function returned something to await (a coroutine, say); a plain
    number, the common case, is answered without `inspect`'s ABC check."""
    return type(value) not in _PLAIN_SCORES and inspect.isawaitable(value)


_PLAIN_SCORES = frozenset({float, int, bool})


def _needs_main_thread(exc: BaseException) -> bool:
    # CPython: "signal only works in main thread of the main interpreter"; math-verify:
    # "... doesn't support threaded environment due to usage of signal.alarm() ...".
    text = str(exc)
    return "main thread" in text or "threaded environment" in text


def _loop_in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()
