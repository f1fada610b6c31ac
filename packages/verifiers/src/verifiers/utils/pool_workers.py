"""`ProcessPool`'s workers: the loop each one runs (`worker_main`), the parent's handle on one
(`Worker`), and how they are made (`WorkerLauncher`: from multiprocessing's forkserver or
spawn, or from this package's own fork server, `verifiers.utils.fork_server`).
"""

from __future__ import annotations

import asyncio
import importlib
import multiprocessing
import os
import signal
import traceback
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any, cast

from verifiers.utils.fork_server import ForkedProcess, ForkServer
from verifiers.utils.pool_errors import PoolError

__all__ = [
    "MINIMAL_FORKSERVER",
    "START_TIMEOUT_S",
    "Worker",
    "WorkerLauncher",
    "call_name",
    "worker_main",
]

START_TIMEOUT_S = 120.0  # import + initializer on a loaded machine
# A start method of this package's own (`verifiers.utils.fork_server`): workers fork from a
# server that imported ``preload`` only, not the parent's main script.
MINIMAL_FORKSERVER = "minimal-forkserver"


# -- worker side ------------------------------------------------------------------------
def worker_main(
    conn: Connection, preload: Sequence[str], initializer: Callable[[], Any] | None
) -> None:
    """Import, initialize, report ready, then serve one call at a time until told to stop."""

    # Ctrl-C belongs to the parent, which kills workers itself; no tracebacks from here.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        for name in preload:
            importlib.import_module(name)
        if initializer is not None:
            initializer()
    except BaseException:
        conn.send(("init_error", traceback.format_exc()))
        return
    conn.send(("ready", os.getpid()))
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return  # the parent went away
        except Exception as e:  # a function this process cannot import (defined in __main__?)
            err = PoolError(f"the call could not be unpickled in the worker: {e!r}")
            conn.send(("err", err, traceback.format_exc()))
            continue
        if msg is None:
            return
        fn, args = msg
        try:
            reply: tuple[Any, ...] = ("ok", fn(*args))
        except BaseException as e:
            if not isinstance(e, Exception):  # SystemExit & co. must not end the caller
                e = PoolError(f"{call_name(fn)} raised {type(e).__name__}: {e}")
            reply = ("err", e, traceback.format_exc())
        try:
            conn.send(reply)
        except Exception as e:  # an unpicklable result or exception
            tb = reply[2] if reply[0] == "err" else ""
            err = PoolError(f"result of {call_name(fn)} could not be sent back: {e!r}")
            conn.send(("err", err, tb))


def call_name(fn: Any) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


def worker_main_on_fd(
    fd: int, preload: Sequence[str], initializer: Callable[[], Any] | None
) -> None:
    """`worker_main` in a fork server's child, which gets its pipe as a descriptor."""
    worker_main(Connection(fd), preload, initializer)


# -- parent side ------------------------------------------------------------------------
class Worker:
    """One worker process and the parent's end of its pipe."""

    __slots__ = ("conn", "proc")

    def __init__(
        self, proc: multiprocessing.process.BaseProcess | ForkedProcess, conn: Connection
    ) -> None:
        self.proc = proc
        self.conn = conn

    @property
    def pid(self) -> int | None:
        return self.proc.pid

    async def recv(self, limit: float | None) -> bytes:
        """The next message (pickled), awaited without a thread; EOF means the worker died."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[bytes] = loop.create_future()
        fd = self.conn.fileno()

        def readable() -> None:
            loop.remove_reader(fd)
            if fut.done():
                return
            try:
                # Blocks only while the rest of an already-started message arrives.
                fut.set_result(self.conn.recv_bytes())
            except (EOFError, OSError) as e:
                fut.set_exception(e)

        loop.add_reader(fd, readable)
        try:
            data = await asyncio.wait_for(fut, limit)
        finally:
            loop.remove_reader(fd)
        return data

    def stop(self, grace: float = 0.0) -> None:
        """Ask an idle worker to exit (``grace`` > 0), else SIGKILL; always reap it."""
        if grace > 0 and self.proc.is_alive():
            try:
                self.conn.send(None)
            except OSError:
                pass
            self.proc.join(grace)
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(5.0)
        self.conn.close()

    def describe_exit(self) -> str:
        self.proc.join(1.0)  # it closed its pipe, so it is exiting
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(5.0)
        code = self.proc.exitcode
        if code is not None and code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exit code {code}"


# -- making workers ---------------------------------------------------------------------
class WorkerLauncher:
    """Makes a pool's workers by its start method: ``"forkserver"`` (the default where there
    is one; ``preload`` joins multiprocessing's forkserver preload list), ``"spawn"``, or
    `MINIMAL_FORKSERVER`, whose server this launcher owns (`close` stops it)."""

    def __init__(
        self,
        start_method: str | None,
        preload: Sequence[str],
        initializer: Callable[[], Any] | None,
        *,
        name: str,
        forkserver_preload: bool = True,
    ) -> None:
        self.preload = tuple(preload)
        self.initializer = initializer
        self.name = name
        self.server: ForkServer | None = None
        self._ctx: _Context | None = None
        if start_method == MINIMAL_FORKSERVER:
            self.server = ForkServer((__name__, *self.preload), start_timeout=START_TIMEOUT_S)
        else:
            self._ctx = _context(start_method)
            if forkserver_preload and self._ctx.get_start_method() == "forkserver":
                _add_forkserver_preload((__name__, *self.preload))

    @property
    def start_method(self) -> str:
        return MINIMAL_FORKSERVER if self._ctx is None else self._ctx.get_start_method()

    def new(self) -> tuple[Worker, Connection]:
        """A worker, not started yet, and the child's end of its pipe."""
        parent, child = multiprocessing.Pipe(duplex=True)
        proc: multiprocessing.process.BaseProcess | ForkedProcess
        if self._ctx is None:
            assert self.server is not None
            args = (self.preload, self.initializer)
            proc = ForkedProcess(self.server, worker_main_on_fd, args, child.fileno())
        else:
            proc = self._ctx.Process(
                target=worker_main,
                args=(child, self.preload, self.initializer),
                name=self.name,
                daemon=True,
            )
        return Worker(proc, parent), child

    def close(self) -> None:
        """Stop the fork server, if this launcher has one (its workers are the pool's)."""
        if self.server is not None:
            self.server.close()


def _add_forkserver_preload(modules: Sequence[str]) -> None:
    """Have the forkserver import ``modules`` so each forked worker inherits them.

    This turns a worker (re)start from seconds of imports into a ~30 ms fork. The list is
    process-wide: we only add to it (keeping ``__main__`` and anything set before), and
    it takes effect only if the forkserver has not started yet; otherwise workers just
    import in their initializer, which is slower but equivalent.
    """
    from multiprocessing import forkserver

    server = getattr(forkserver, "_forkserver", None)
    current = list(getattr(server, "_preload_modules", None) or ["__main__"])
    missing = [m for m in modules if m not in current]
    if missing:
        forkserver.set_forkserver_preload(current + missing)


if TYPE_CHECKING:  # the contexts a pool may use (typeshed's BaseContext has no Process)
    from multiprocessing.context import ForkServerContext, SpawnContext

    _Context = ForkServerContext | SpawnContext


def _context(start_method: str | None) -> _Context:
    if start_method is None:
        methods = multiprocessing.get_all_start_methods()
        start_method = "forkserver" if "forkserver" in methods else "spawn"
    ctx = multiprocessing.get_context(start_method)
    if ctx.get_start_method() == "fork":
        raise ValueError("the 'fork' start method is unsafe here; use forkserver or spawn")
    return cast("_Context", ctx)
