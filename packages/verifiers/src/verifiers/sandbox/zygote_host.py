"""Host side of the zygote (`zygote.py`): starting it, asking it for sandboxes, and the
process-like handle of a sandbox it cloned."""

from __future__ import annotations

import array
import asyncio
import base64
import json
import os
import signal
import socket
import subprocess
import threading

from verifiers.sandbox import contract
from verifiers.sandbox.agent_client import READ_LIMIT
from verifiers.sandbox.base import SandboxCreationError
from verifiers.sandbox.support import AGENT_SRC, SANDBOX_PYTHON, ZYGOTE_SRC, bytecode

# The zygote's command line: no paths (every sandbox inherits it as /proc/<pid>/cmdline); its
# stdin is the socket to the host, which sends the configuration first, with the code of the
# zygote and the agent (so the zygote, and every sandbox forked from it, holds no host path).
ZYGOTE_BOOT = """import binascii, json, marshal, socket, sys, types
s = socket.socket(fileno=0)
c = json.loads(s.recv(1 << 22))
for n, (pyc, src) in c.pop("code").items():
    m = sys.modules[n] = types.ModuleType(n)
    if pyc:
        code = marshal.loads(binascii.a2b_base64(pyc)[16:])
    else:
        code = compile(src, "/opt/agent/" + n + ".py", "exec")
    exec(code, m.__dict__)
del m, code
sys.modules["zygote"].main(s, c)
"""


class ZygoteError(SandboxCreationError):
    """The zygote could not be started or did not answer."""


class Zygote:
    """Host side of `zygote.py`: starts it (as the sandbox uid, under /usr/bin/python3),
    restarts it if it died, and asks it for new sandboxes. Synchronous and lock-protected (a
    request is one fork in the zygote, well under a millisecond of waiting), so it works from
    any thread and event loop."""

    def __init__(self, uid: int, seccomp: bytes | None) -> None:
        self.uid, self.seccomp = uid, seccomp
        self.proc: subprocess.Popen[bytes] | None = None
        self.sock: socket.socket | None = None
        self.lock = threading.RLock()  # stop() runs inside spawn() too
        self.starts = 0

    def config(self) -> dict:
        """What the zygote is sent at start: its code, the agent's, the seccomp filter and
        the generated /etc (the same for all its sandboxes: they have no network)."""
        b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
        code = bytecode()
        return {
            # bytecode (compiled by the zygote's interpreter): loading it allocates the code
            # objects compactly, where compiling source in the zygote would scatter them over
            # pages every sandbox then copies on write (~3 ms more per cold start)
            "code": {
                name: [b64(code[name]) if name in code else None, src.read_text()]
                for name, src in (("agent", AGENT_SRC), ("zygote", ZYGOTE_SRC))
            },
            "seccomp": b64(self.seccomp) if self.seccomp is not None else None,
            "etc": {
                "files": {k: b64(v) for k, v in contract.etc_files(network=False).items()},
                "links": contract.etc_links(),
                "system": list(contract.SYSTEM_ETC),
            },
        }

    def _start(self) -> None:
        self.stop()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.proc = subprocess.Popen(
                ["python3", "-I", "-S", "-c", ZYGOTE_BOOT],
                executable=SANDBOX_PYTHON,
                stdin=theirs.fileno(),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd="/",
                env={},  # nothing of the host's: every sandbox inherits it as /proc/N/environ
                user=self.uid,
                group=self.uid,
                extra_groups=[],
                start_new_session=True,
            )
        finally:
            theirs.close()
        ours.settimeout(30.0)
        self.sock = ours
        try:
            ours.send(json.dumps(self.config()).encode())
            hello = ours.recv(4096)
        except OSError as e:
            raise self._stopped(f"the sandbox zygote did not start: {e}") from e
        if not hello:
            raise self._stopped("the sandbox zygote exited at start-up")
        ours.settimeout(10.0)
        self.starts += 1

    def stop(self) -> None:
        """Kill the zygote (its sandboxes die with it) and reap it."""
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            self.proc = None

    def _stopped(self, why: str) -> ZygoteError:
        """Stop the zygote (a half-answering one would fail every later request too) and say
        why, to be raised."""
        self.stop()
        return ZygoteError(why)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def spawn(self, req: dict, fds: list[int]) -> tuple[int, int]:
        """Have the zygote start a sandbox; returns its init's (pid, pidfd)."""
        with self.lock:
            if not self.running:
                self._start()
            assert self.sock is not None
            try:
                self.sock.sendmsg(
                    [json.dumps(req).encode()],
                    [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))],
                )
                msg, anc, _, _ = self.sock.recvmsg(4096, socket.CMSG_SPACE(4))
            except OSError as e:
                raise self._stopped(f"the sandbox zygote stopped answering: {e}") from e
            if not msg:
                raise self._stopped("the sandbox zygote exited")
        got = array.array("i")
        for level, kind, data in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                got.frombytes(data[: len(data) - len(data) % got.itemsize])
        res = json.loads(msg)
        if "error" in res or not got:
            for fd in got:
                os.close(fd)
            raise ZygoteError(f"the sandbox zygote could not fork: {res.get('error')}")
        return res["pid"], got[0]


class ZygoteProcess:
    """What `AgentSandbox` needs of an `asyncio.subprocess.Process`, for a sandbox cloned by
    the zygote: the agent's pipes, `kill` and `wait`, through a pidfd on the sandbox's init
    (pid 1 of its namespace: it exits once nothing of the sandbox runs any more)."""

    def __init__(self, pid: int, pidfd: int) -> None:
        self.pid = self.monitor_pid = pid  # init's pid on the host
        self.pidfd = pidfd
        self.returncode: int | None = None
        self.stdin: asyncio.StreamWriter | None = None
        self.stdout: asyncio.StreamReader | None = None
        self._exited: asyncio.Future[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def connect(self, stdin_w: int, stdout_r: int) -> None:
        loop = self._loop = asyncio.get_running_loop()
        stdout = self.stdout = asyncio.StreamReader(limit=READ_LIMIT, loop=loop)
        rpipe = os.fdopen(stdout_r, "rb", buffering=0)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdout), rpipe)
        wpipe = os.fdopen(stdin_w, "wb", buffering=0)
        wt, wp = await loop.connect_write_pipe(
            lambda: asyncio.streams.FlowControlMixin(loop), wpipe
        )
        self.stdin = asyncio.StreamWriter(wt, wp, None, loop)
        self._exited = loop.create_future()
        loop.add_reader(self.pidfd, self._on_exit)

    def _on_exit(self) -> None:
        self._release_pidfd()
        if self.returncode is None:
            self.returncode = -signal.SIGKILL
        if self._exited is not None and not self._exited.done():
            self._exited.set_result(None)

    def _release_pidfd(self) -> None:
        if self.pidfd < 0:
            return
        if self._loop is not None and not self._loop.is_closed():
            self._loop.remove_reader(self.pidfd)
        os.close(self.pidfd)
        self.pidfd = -1

    def kill(self) -> None:
        """SIGKILL the sandbox's init: the kernel kills the rest of its pid namespace. By
        pidfd, so never another process that reused the pid."""
        if self.pidfd >= 0:
            signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)

    async def wait(self) -> int:
        if self._exited is not None:
            await asyncio.shield(self._exited)
        return self.returncode if self.returncode is not None else 0

    def close(self) -> None:
        if self.stdin is not None:
            self.stdin.close()
        transport = getattr(self.stdout, "_transport", None)
        if transport is not None:
            transport.close()
        self._release_pidfd()
