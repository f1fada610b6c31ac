"""An asyncio-friendly pool of worker processes with a hard, per-call kill timeout.

``concurrent.futures.ProcessPoolExecutor`` cannot stop one runaway call: a hung worker
keeps its slot forever, and terminating it breaks the whole executor. Here each worker is
a separate process that runs one call at a time over its own pipe, so a call that runs
past its timeout has just its worker SIGKILLed and replaced; the other in-flight calls
are not disturbed.

>>> pool = ProcessPool(size=2, preload=("math_verify",))  # doctest: +SKIP
>>> await pool.run(math.factorial, 10, timeout=5.0)        # doctest: +SKIP
>>> pool.close()                                            # doctest: +SKIP

Design notes:

* Workers start lazily (or eagerly with ``await pool.start()``, or in the background with
  ``pool.prestart()``) from a ``forkserver``
  context (``spawn`` where there is none); never ``fork``, which is unsafe from a process
  that runs threads or an event loop. Each imports ``preload`` and runs ``initializer``
  before it reports ready, so start-up cost is never charged to a call's timeout. The
  ``preload`` modules are also added to the forkserver's preload list, so replacing a
  killed worker is a fork, not a fresh round of imports (so they must not start threads
  when imported: the forkserver forks).
* ``start_method="minimal-forkserver"`` (`MINIMAL_FORKSERVER`) forks workers from a server
  of this package's own (`verifiers.utils.fork_server`) that imports ``preload`` and
  nothing else: multiprocessing's forkserver and spawn also import the parent's main
  script, which for `vf-eval` is the whole SDK. Functions run there must be importable by
  module path (not defined in ``__main__``).
* The pool holds no asyncio object across calls, so one pool serves successive event
  loops (``asyncio.run`` per ``evaluate_sync``). Unix only: results are awaited with
  ``loop.add_reader`` on the pipe.
* ``close()`` stops idle workers and kills busy ones; a ``weakref.finalize`` does the same
  if the owner forgets, so no worker outlives the pool.
"""

from __future__ import annotations

import asyncio
import collections
import os
import pickle
import threading
import weakref
from collections.abc import Callable, Sequence
from multiprocessing.reduction import ForkingPickler
from typing import Any, TypeVar

from verifiers.utils.pool_errors import (
    PoolClosedError,
    PoolError,
    PoolOverloadedError,
    WorkerCrashedError,
    WorkerStartError,
    WorkerTimeoutError,
)
from verifiers.utils.pool_workers import (
    MINIMAL_FORKSERVER,
    START_TIMEOUT_S,
    Worker,
    WorkerLauncher,
    call_name,
)

__all__ = [
    "MINIMAL_FORKSERVER",
    "PoolClosedError",
    "PoolError",
    "PoolOverloadedError",
    "ProcessPool",
    "WorkerCrashedError",
    "WorkerStartError",
    "WorkerTimeoutError",
    "default_pool_size",
]

T = TypeVar("T")

STOP_GRACE_S = 2.0  # an idle worker asked to exit gets this long before SIGKILL


class _RemoteTraceback(Exception):
    """Carries a worker-side traceback as the ``__cause__`` of a re-raised exception."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def default_pool_size() -> int:
    """CPUs this process may use (affinity-aware), at least 1."""
    count = getattr(os, "process_cpu_count", None)  # Python 3.13+
    if count is not None:
        return max(1, count() or 1)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


_SPAWN = object()  # handed to a waiter: a worker slot is reserved for you, start one


class ProcessPool:
    """At most ``size`` worker processes, each running one call at a time.

    ``await run(fn, *args, timeout=...)`` runs a picklable top-level ``fn`` in a worker.
    Calls beyond ``size`` wait in a FIFO queue of at most ``max_queued`` entries; one more
    raises `PoolOverloadedError`. A call past ``timeout`` raises `WorkerTimeoutError`, a
    worker that dies raises `WorkerCrashedError`; in both cases the worker is replaced.
    An exception raised by ``fn`` is re-raised as is (worker traceback as its cause).
    """

    def __init__(
        self,
        size: int | None = None,
        *,
        preload: Sequence[str] = (),
        initializer: Callable[[], Any] | None = None,
        max_queued: int = 10_000,
        start_method: str | None = None,
        forkserver_preload: bool = True,
        name: str = "vf-pool",
    ) -> None:
        self.size = int(size) if size is not None else default_pool_size()
        if self.size < 1:
            raise ValueError(f"pool size must be at least 1, got {size}")
        self.preload = tuple(preload)
        self.initializer = initializer
        self.max_queued = max_queued
        self.name = name
        # preload: this module too, for the errors a worker sends back
        self._launcher = WorkerLauncher(
            start_method,
            (__name__, *self.preload),
            initializer,
            name=name,
            forkserver_preload=forkserver_preload,
        )
        weakref.finalize(self, self._launcher.close)
        self._lock = threading.Lock()
        self._idle: list[Worker] = []
        self._workers: set[Worker] = set()  # every live worker, starting, idle or busy
        self._slots = 0  # workers started or starting; never above size
        self._waiters: collections.deque[asyncio.Future[Any]] = collections.deque()
        self._closed = False
        self._dying: set[Worker] = set()  # killed, not yet reaped
        self._finalizer = weakref.finalize(self, _kill_all, self._workers, self._dying)

    # -- public ---------------------------------------------------------------------------
    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def pids(self) -> list[int]:
        """Process ids of the live workers."""
        with self._lock:
            return [w.pid for w in self._workers if w.pid is not None]

    @property
    def start_method(self) -> str:
        return self._launcher.start_method

    async def start(self, n: int | None = None) -> None:
        """Start workers now (up to ``n``, default ``size``) instead of on first use."""
        n = self.size if n is None else min(n, self.size)
        got = await asyncio.gather(*(self._acquire() for _ in range(n)), return_exceptions=True)
        for w in got:
            if isinstance(w, Worker):
                self._release(w)
        for e in got:
            if isinstance(e, BaseException):
                raise e

    def prestart(self, n: int = 1) -> None:
        """Have at least ``n`` workers started or starting: the missing ones start now, in
        background threads, without an event loop (a constructor can call it), so that the
        first call finds a worker ready, or waits only for the rest of its start, instead
        of paying a whole start. A worker that fails to start just frees its slot; the
        calls that need one start their own and report it."""
        with self._lock:
            if self._closed:
                return
            n = min(n, self.size) - self._slots
            if n <= 0:
                return
            self._slots += n
        for _ in range(n):
            threading.Thread(
                target=self._start_in_background, name=f"{self.name}-start", daemon=True
            ).start()

    # The timeout is not the caller's to wrap with asyncio.timeout: it must kill the worker
    # and count from when the call starts running, not from when it joined the queue.
    async def run(
        self,
        fn: Callable[..., T],
        *args: Any,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> T:
        """Run ``fn(*args)`` in a worker; ``timeout`` (seconds) counts from when it starts."""
        payload = ForkingPickler.dumps((fn, args))  # pickling errors raise before queueing
        worker = await self._acquire()
        try:
            worker.conn.send_bytes(payload)
            data = await worker.recv(timeout)
        except TimeoutError:
            self._discard(worker)
            raise WorkerTimeoutError(
                f"{call_name(fn)} ran past its {timeout:g} s timeout; worker {worker.pid} killed"
            ) from None
        except (EOFError, OSError):
            how = worker.describe_exit()
            self._discard(worker)
            if self._closed:
                raise PoolClosedError("the pool was closed while the call ran") from None
            raise WorkerCrashedError(
                f"worker {worker.pid} died running {call_name(fn)} ({how})"
            ) from None
        except BaseException:  # cancelled: the worker is still busy, so it cannot be reused
            self._discard(worker)
            raise
        self._release(worker)
        try:
            reply = pickle.loads(data)
        except Exception as e:
            raise PoolError(f"the result of {call_name(fn)} could not be unpickled: {e!r}") from e
        if reply[0] == "ok":
            return reply[1]
        exc: BaseException = reply[1]
        raise exc from _RemoteTraceback(reply[2])

    def close(self) -> None:
        """Stop every worker (idle ones exit cleanly, busy ones are killed) and reap them.

        Calls still waiting or running raise `PoolClosedError`. Idempotent.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            waiters = list(self._waiters)
            self._waiters.clear()
            idle = list(self._idle)
            self._idle.clear()
            busy = [w for w in self._workers if w not in idle]
            self._workers.clear()
            dying = list(self._dying)
        for fut in waiters:
            _deliver(fut, PoolClosedError("the pool was closed"), self._handback)
        for w in busy:
            w.proc.kill()  # their calls see EOF and raise PoolClosedError
        for w in idle:
            w.stop(grace=STOP_GRACE_S)
        for w in busy + dying:
            w.proc.join(5.0)
        self._launcher.close()
        self._finalizer.detach()

    async def aclose(self) -> None:
        self.close()

    async def __aenter__(self) -> ProcessPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    # -- workers --------------------------------------------------------------------------
    async def _acquire(self) -> Worker:
        loop = asyncio.get_running_loop()
        while (worker := self._pop_idle()) is not None:
            if worker.proc.is_alive():
                return worker
            self._discard(worker)  # died while idle (OOM killer, a stray signal)
        with self._lock:
            if self._closed:
                raise PoolClosedError("the pool is closed")
            if self._slots < self.size:
                self._slots += 1
                fut = None
            else:
                if len(self._waiters) >= self.max_queued:
                    raise PoolOverloadedError(
                        f"{len(self._waiters)} calls already wait for {self.size} workers"
                    )
                fut = loop.create_future()
                self._waiters.append(fut)
        if fut is not None:
            try:
                got = await fut
            except BaseException:
                with self._lock:
                    if fut in self._waiters:
                        self._waiters.remove(fut)
                if fut.done() and not fut.cancelled() and fut.exception() is None:
                    self._handback(fut.result())  # handed over just as we were cancelled
                raise
            if isinstance(got, Worker):
                return got
        # A slot is reserved for us: start a worker in it.
        try:
            return await self._start_worker()
        except BaseException:
            self._free_slot()
            raise

    async def _start_worker(self) -> Worker:
        loop = asyncio.get_running_loop()
        worker, child = self._launcher.new()
        proc, parent = worker.proc, worker.conn
        # Starting talks to the forkserver (and starts it the first time): not on the loop.
        try:
            await loop.run_in_executor(None, proc.start)
        except BaseException as e:
            if proc.pid is not None:
                worker.stop()
            else:
                parent.close()
            child.close()
            if isinstance(e, Exception):
                raise WorkerStartError(f"could not start a worker: {e!r}") from e
            raise
        child.close()  # the worker holds the only other end: its death is EOF for us
        with self._lock:
            self._workers.add(worker)
        try:
            msg = pickle.loads(await worker.recv(START_TIMEOUT_S))
        except BaseException as e:
            timed_out = isinstance(e, TimeoutError)
            died = not timed_out and isinstance(e, (EOFError, OSError))
            how = worker.describe_exit() if died else "timed out"
            self._forget(worker)
            worker.stop()
            if self._closed:
                raise PoolClosedError("the pool was closed") from None
            if timed_out or died:
                raise WorkerStartError(f"worker {proc.pid} failed to start ({how})") from None
            raise
        if msg[0] != "ready":
            self._forget(worker)
            worker.stop()
            raise WorkerStartError(f"worker initializer failed:\n{msg[1]}")
        if self._closed:
            self._forget(worker)
            worker.stop(grace=STOP_GRACE_S)
            raise PoolClosedError("the pool was closed")
        return worker

    def _start_in_background(self) -> None:
        """`prestart`'s thread: start a worker in an already reserved slot, blocking."""
        worker, child = self._launcher.new()
        proc, parent = worker.proc, worker.conn
        try:
            proc.start()
        except BaseException:
            parent.close()
            child.close()
            self._free_slot()
            return
        child.close()
        with self._lock:
            self._workers.add(worker)
        try:
            # poll() returns early on EOF too (the worker died, or close() killed it)
            msg = pickle.loads(parent.recv_bytes()) if parent.poll(START_TIMEOUT_S) else None
        except (EOFError, OSError, pickle.UnpicklingError):
            msg = None
        if msg is None or msg[0] != "ready" or self._closed:
            self._forget(worker)
            worker.stop(grace=STOP_GRACE_S if msg is not None else 0.0)
            self._free_slot()
            return
        self._release(worker)

    def _pop_idle(self) -> Worker | None:
        with self._lock:
            if self._closed:
                raise PoolClosedError("the pool is closed")
            return self._idle.pop() if self._idle else None

    def _forget(self, worker: Worker) -> None:
        with self._lock:
            self._workers.discard(worker)

    def _release(self, worker: Worker) -> None:
        """A healthy worker is free: hand it to the first waiter, else park it."""
        with self._lock:
            if not self._closed:
                if not self._waiters:
                    self._idle.append(worker)
                    return
                fut = self._waiters.popleft()
            else:
                fut = None
        if fut is None:
            self._forget(worker)
            worker.stop(grace=STOP_GRACE_S)
        else:
            _deliver(fut, worker, self._handback)

    def _discard(self, worker: Worker) -> None:
        """Kill a worker that cannot be reused; its slot goes to a waiter or is freed."""
        with self._lock:
            self._workers.discard(worker)
            self._dying.add(worker)
        if worker.proc.is_alive():
            worker.proc.kill()

        def reap() -> None:
            worker.stop()  # already SIGKILLed: this joins and closes the pipe
            with self._lock:
                self._dying.discard(worker)

        # Reaping waits for the kernel to free the worker's memory (0.5 s for a grading
        # that blew up to GBs): do it off the loop so other calls' results are not held up.
        try:
            asyncio.get_running_loop().run_in_executor(None, reap)
        except RuntimeError:  # no loop here: reap inline
            reap()
        self._free_slot()

    def _free_slot(self) -> None:
        with self._lock:
            if self._closed or not self._waiters:
                self._slots -= 1
                return
            fut = self._waiters.popleft()
        _deliver(fut, _SPAWN, self._handback)

    def _handback(self, item: Any) -> None:
        """Return what a waiter could not take (it was cancelled or its loop is gone)."""
        if isinstance(item, Worker):
            self._release(item)
        elif item is _SPAWN:
            self._free_slot()


def _deliver(fut: asyncio.Future[Any], item: Any, handback: Callable[[Any], None]) -> None:
    """Resolve a waiter on its own loop (maybe another thread's); hand back on failure."""

    def settle() -> None:
        if fut.done():
            if not isinstance(item, BaseException):
                handback(item)
        elif isinstance(item, BaseException):
            fut.set_exception(item)
        else:
            fut.set_result(item)

    try:
        fut.get_loop().call_soon_threadsafe(settle)
    except RuntimeError:  # that loop is closed; its waiter will never run
        if not isinstance(item, BaseException):
            handback(item)


def _kill_all(*groups: set[Worker]) -> None:
    """Safety net (garbage collection / interpreter exit): no worker outlives its pool."""
    for workers in groups:
        for w in list(workers):
            try:
                w.proc.kill()
                w.proc.join(1.0)
            except Exception:
                pass
        workers.clear()
