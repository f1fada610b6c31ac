"""A fork server that imports only what it is told to: `ProcessPool`'s ``"minimal-forkserver"``.

multiprocessing's forkserver (and spawn) import the parent's main script in every process
they make, so that functions defined there unpickle: for a `vf-eval` run that is the whole
SDK and openai's types (~2 s), paid before the first worker can start. This server is a
fresh interpreter started from a two-line command; it imports the pool's ``preload`` once,
then forks each worker from itself, so a worker holds the preload and nothing else. What a
worker runs must therefore be importable by module path, not defined in ``__main__``.

Protocol, over one Unix socket pair per server: the parent sends the configuration (its
``sys.path`` and the modules to preload) and waits for "ready"; then each request is a
pickled ``(fn, args)`` with one file descriptor attached (the worker's end of its pipe),
answered with the child's pid and, attached, the read end of a status pipe on which the
server writes the child's exit code when it reaps it (EOF: the server itself is gone).
Closing the socket stops the server; its workers notice their own pipes closing.
"""

from __future__ import annotations

import importlib
import os
import pickle
import select
import selectors
import signal
import socket
import struct
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["ForkServer", "ForkedProcess", "serve"]

_CODE = struct.Struct("!i")  # an exit code, as os.waitstatus_to_exitcode gives it
_MAX_MESSAGE = 1 << 20
_LOST = 255  # exit code reported when the server vanished before reporting one


def _send(sock: socket.socket, obj: Any, fds: Sequence[int] = ()) -> None:
    data = pickle.dumps(obj)
    if len(data) > _MAX_MESSAGE:
        raise ValueError(f"a fork-server message of {len(data)} bytes is too large")
    socket.send_fds(sock, [data], list(fds))


class _BadRequest(Exception):
    """A request that does not unpickle in the server (its function is not importable)."""


def _recv(sock: socket.socket, max_fds: int = 1) -> tuple[Any, list[int]]:
    data, fds, _flags, _addr = socket.recv_fds(sock, _MAX_MESSAGE, max_fds)
    try:
        if not data:
            raise EOFError("the other end closed the fork server's socket")
        return pickle.loads(data), fds
    except BaseException as e:
        for fd in fds:
            os.close(fd)
        if isinstance(e, Exception) and not isinstance(e, EOFError):
            raise _BadRequest(repr(e)) from e
        raise


# -- parent side ------------------------------------------------------------------------
class ForkServer:
    """Starts the server process on first use (blocking: a preload may take seconds) and
    asks it for children. Thread-safe; one request at a time."""

    def __init__(self, preload: Sequence[str] = (), *, start_timeout: float = 120.0) -> None:
        self.preload = tuple(preload)
        self.start_timeout = start_timeout
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._closed = False

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def fork(self, fn: Callable[..., Any], args: tuple[Any, ...], fd: int) -> tuple[int, int]:
        """Run ``fn(fd, *args)`` in a new child; returns its pid and its status pipe."""
        with self._lock:
            sock = self._ensure_running()
            try:
                _send(sock, (fn, args), [fd])
                pid, fds = _recv(sock)
            except (OSError, EOFError) as e:
                self._stop()
                raise OSError(f"the fork server stopped: {e!r}") from e
            if not fds:
                raise OSError(f"the fork server could not fork: {pid}")
            return pid, fds[0]

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._stop()

    def _ensure_running(self) -> socket.socket:
        if self._closed:
            raise OSError("the fork server is closed")
        if self._sock is not None:
            return self._sock
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-c", f"from {__name__} import serve; serve({theirs.fileno()})"],
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
            )
        finally:
            theirs.close()
        self._sock = ours
        try:
            _send(ours, {"sys_path": list(sys.path), "preload": self.preload})
            ours.settimeout(self.start_timeout)
            reply, _ = _recv(ours, 0)
            ours.settimeout(None)
        except (OSError, EOFError) as e:
            self._stop()
            raise OSError(f"the fork server did not start: {e!r}") from e
        if reply != "ready":
            self._stop()
            raise OSError(f"the fork server could not import its preload:\n{reply}")
        return ours

    def _stop(self) -> None:
        sock, self._sock = self._sock, None
        proc, self._proc = self._proc, None
        if sock is not None:
            sock.close()  # the server exits on EOF
        if proc is not None:
            try:
                proc.wait(2.0)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5.0)


class ForkedProcess:
    """A fork server's child, with the part of `multiprocessing.Process`'s interface that
    `ProcessPool` uses: ``start``, ``pid``, ``is_alive``, ``join``, ``kill``, ``exitcode``."""

    def __init__(
        self, server: ForkServer, fn: Callable[..., Any], args: tuple[Any, ...], fd: int
    ) -> None:
        self._server = server
        self._fn = fn
        self._args = args
        self._fd = fd
        self.pid: int | None = None
        self._status: int | None = None  # read end of the status pipe, until read
        self._code: int | None = None

    def start(self) -> None:
        self.pid, self._status = self._server.fork(self._fn, self._args, self._fd)

    @property
    def exitcode(self) -> int | None:
        """None while the child runs; then its exit code (minus the signal that killed it)."""
        if self._code is None and self._status is not None:
            if select.select([self._status], [], [], 0)[0]:
                self._read_status()
        return self._code

    def is_alive(self) -> bool:
        return self.pid is not None and self.exitcode is None

    def join(self, timeout: float | None = None) -> None:
        if self._code is None and self._status is not None:
            if select.select([self._status], [], [], timeout)[0]:
                self._read_status()

    def kill(self) -> None:
        if self.pid is not None and self.exitcode is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def _read_status(self) -> None:
        assert self._status is not None
        data = os.read(self._status, _CODE.size)
        self._code = _CODE.unpack(data)[0] if len(data) == _CODE.size else _LOST
        os.close(self._status)
        self._status = None

    def __del__(self) -> None:
        if self._status is not None:
            os.close(self._status)


# -- server side ------------------------------------------------------------------------
def serve(fd: int) -> None:
    """The server process's main: configure, preload, then fork on request until EOF."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    sock = socket.socket(fileno=fd)
    try:
        config, _ = _recv(sock, 0)  # only what the parent sent: builtins and strings
        sys.path[:] = config["sys_path"]
        for name in config["preload"]:
            importlib.import_module(name)
    except EOFError:
        return
    except BaseException:
        _send(sock, traceback.format_exc())
        return
    _send(sock, "ready")
    _Server(sock).run()


class _Server:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.children: dict[int, int] = {}  # pid -> write end of its status pipe
        self.selector = selectors.DefaultSelector()
        self.wake_r, self.wake_w = os.pipe()
        for end in (self.wake_r, self.wake_w):
            os.set_blocking(end, False)

    def run(self) -> None:
        signal.set_wakeup_fd(self.wake_w)  # SIGCHLD wakes the select below
        signal.signal(signal.SIGCHLD, lambda *_: None)
        with self.selector:
            self.selector.register(self.sock, selectors.EVENT_READ)
            self.selector.register(self.wake_r, selectors.EVENT_READ)
            while True:
                for key, _ in self.selector.select():
                    if key.fileobj is not self.sock:
                        self.reap()
                        continue
                    try:
                        request, fds = _recv(self.sock)
                    except (OSError, EOFError):
                        return  # the parent closed or died: stop forking
                    except _BadRequest as e:
                        _send(self.sock, f"the request did not unpickle here: {e}")
                        continue
                    self.fork(request, fds)

    def fork(self, request: tuple[Callable[..., Any], tuple[Any, ...]], fds: list[int]) -> None:
        status_r, status_w = os.pipe()
        try:
            pid = os.fork()
        except OSError as e:
            for end in (status_r, status_w, *fds):
                os.close(end)
            _send(self.sock, f"fork failed: {e!r}")
            return
        if pid == 0:
            self.child(request, fds[0], status_r, status_w)
        for end in fds:  # the worker's pipe is the child's alone: its death is EOF there
            os.close(end)
        self.children[pid] = status_w
        _send(self.sock, pid, [status_r])
        os.close(status_r)
        self.reap()  # a child may already have gone

    def child(
        self, request: tuple[Callable[..., Any], tuple[Any, ...]], fd: int, *mine: int
    ) -> None:
        """In the forked child: drop the server's descriptors and handlers, run, exit."""
        code = 1
        try:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            for end in (*mine, *self.children.values(), self.wake_r, self.wake_w):
                os.close(end)
            self.selector.close()
            self.sock.close()
            fn, args = request
            fn(fd, *args)
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)

    def reap(self) -> None:
        try:
            while os.read(self.wake_r, 512):
                pass
        except BlockingIOError:
            pass
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            status_w = self.children.pop(pid, None)
            if status_w is not None:
                try:
                    os.write(status_w, _CODE.pack(os.waitstatus_to_exitcode(status)))
                except OSError:
                    pass  # the parent already let go of this child
                os.close(status_w)
