"""Host side of the agent protocol, shared by every provider that runs `agent.py`."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import io
import json
import tarfile
import time
from collections.abc import Callable, Mapping
from typing import Any, Self

from verifiers.sandbox.base import (
    ExecRequest,
    ExecResult,
    Sandbox,
    SandboxCreationError,
    SandboxDeadError,
    SandboxSpec,
)

GRACE = 5.0  # seconds past a command's own timeout before the agent is declared dead
READ_LIMIT = 1 << 28  # one reply line may carry a whole file or tarball


class AgentSandbox(Sandbox):
    """A sandbox whose commands are served by `agent.py` over a stdin/stdout pipe pair.
    Providers supply the process and a `_kill` that tears everything down."""

    def __init__(self, sid: str, spec: SandboxSpec, proc: asyncio.subprocess.Process) -> None:
        self.id = sid
        self.spec = spec
        self.proc = proc
        self.created_at = time.monotonic()
        self._lock = asyncio.Lock()
        self._closed = False
        self._dead_reason: str | None = None
        self._seq = 0
        self._stale = 0
        self.agent_pid = 0
        self._lifetime: asyncio.TimerHandle | None = None
        self.on_close: Callable[[AgentSandbox], None] | None = None
        self.loop = asyncio.get_running_loop()  # its pipes are this loop's
        if spec.lifetime:
            self._lifetime = self.loop.call_later(spec.lifetime, self._expire)

    # -- provider hooks ------------------------------------------------------------------
    async def _kill(self) -> None:
        raise NotImplementedError

    def _kill_process(self) -> None:
        """SIGKILL the process the provider started, unless it has exited already."""
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()

    def _interrupt(self) -> bool:
        """Send the agent SIGUSR1 (abandon the current request); False if this provider
        cannot, in which case a cancelled request costs the sandbox."""
        return False

    # -- protocol ------------------------------------------------------------------------
    async def wait_ready(self, timeout: float) -> None:  # noqa: ASYNC109
        line = await asyncio.wait_for(self._readline(), timeout)
        hello = json.loads(line) if line else {}
        self.hello: dict[str, Any] = hello
        if not hello.get("ready"):
            why = f": {hello['error']}" if hello.get("error") else ""
            raise SandboxDeadError(f"sandbox {self.id}: agent did not start{why}")
        self.agent_pid = hello.get("pid", 0)  # as the agent sees it (its namespace)

    async def started(self, timeout: float) -> Self:  # noqa: ASYNC109
        """Wait for the agent's hello; on failure close everything and raise
        `SandboxCreationError` (a cancellation closes too, and propagates)."""
        try:
            await self.wait_ready(timeout)
        except BaseException as e:
            await self.close()
            if isinstance(e, Exception):
                raise SandboxCreationError(f"sandbox {self.id} did not start: {e!r}") from e
            raise
        return self

    async def _readline(self) -> bytes:
        assert self.proc.stdout is not None
        return await self.proc.stdout.readline()

    async def _call(self, req: dict[str, Any], timeout: float) -> dict[str, Any]:  # noqa: ASYNC109
        if self._closed or self._dead_reason:
            raise SandboxDeadError(f"sandbox {self.id} is {self._dead_reason or 'closed'}")
        async with self._lock:
            self._seq += 1
            req["id"] = self._seq
            assert self.proc.stdin is not None
            sent = False
            try:
                while self._stale:  # replies to requests whose callers were cancelled
                    if not await asyncio.wait_for(self._readline(), GRACE):
                        break  # EOF: handled below like any dead agent
                    self._stale -= 1
                self.proc.stdin.write(json.dumps(req).encode() + b"\n")
                await self.proc.stdin.drain()
                sent = True
                line = await asyncio.wait_for(self._readline(), timeout + GRACE)
            except (TimeoutError, ConnectionError, OSError) as e:
                await self._die(f"unresponsive ({type(e).__name__})")
                raise SandboxDeadError(f"sandbox {self.id} stopped answering") from e
            except asyncio.CancelledError:
                # The caller gave up (rollout cancelled or timed out). Tell the agent to drop
                # the request and skip its reply later, so the sandbox stays usable (reward
                # functions may still need it); if that is not possible, the sandbox is spent.
                if sent and self._interrupt():
                    self._stale += 1
                else:
                    await asyncio.shield(self._die("interrupted mid-command"))
                raise
            if not line:
                await self._die("agent exited")
                raise SandboxDeadError(f"sandbox {self.id}: the agent exited (killed or OOM)")
            res = json.loads(line)
            if "error" in res:
                raise OSError(res["error"])
            return res

    async def _die(self, reason: str) -> None:
        self._dead_reason = reason
        await self.close()

    def _expire(self) -> None:
        self._dead_reason = "past its lifetime"
        self._expiry = asyncio.ensure_future(self.close())  # keep a reference until done

    # -- the interface ---------------------------------------------------------------------
    async def run(self, request: ExecRequest) -> ExecResult:
        req: dict[str, Any] = {
            "op": "exec",
            "cmd": request.cmd,
            "timeout": request.timeout,
            "cap": self.spec.output_limit,
            "cwd": request.cwd,
            "env": request.env,
        }
        if request.stdin is not None:
            req["stdin"] = base64.b64encode(request.stdin).decode()
        res = await self._call(req, request.timeout)
        return ExecResult(
            exit_code=res["exit_code"],
            stdout=res["stdout"],
            stderr=res["stderr"],
            timed_out=res["timed_out"],
            truncated=res["truncated"],
            duration=res["duration"],
        )

    async def python(self, code: str, timeout: float = 30.0) -> dict[str, Any]:  # noqa: ASYNC109
        res = await self._call(
            {"op": "py", "code": code, "timeout": timeout, "cap": self.spec.output_limit},
            timeout,
        )
        res.pop("id", None)
        res.setdefault("timed_out", False)
        return res

    async def write_file(self, path: str, data: str | bytes, mode: int = 0o644) -> None:
        raw = data.encode() if isinstance(data, str) else data
        await self._call(
            {"op": "write", "path": path, "data": base64.b64encode(raw).decode(), "mode": mode},
            30.0,
        )

    async def read_file(self, path: str) -> bytes:
        res = await self._call({"op": "read", "path": path}, 30.0)
        return base64.b64decode(res["data"])

    async def write_dir(self, path: str, files: Mapping[str, str | bytes]) -> None:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tf:
            for name, content in files.items():
                raw = content.encode() if isinstance(content, str) else content
                info = tarfile.TarInfo(name)
                info.size, info.mode = len(raw), 0o644
                tf.addfile(info, io.BytesIO(raw))
        await self._call(
            {"op": "put", "path": path, "tar": base64.b64encode(buf.getvalue()).decode()}, 60.0
        )

    async def read_dir(self, path: str) -> dict[str, bytes]:
        res = await self._call({"op": "get", "path": path}, 60.0)
        out: dict[str, bytes] = {}
        with tarfile.open(fileobj=io.BytesIO(base64.b64decode(res["tar"]))) as tf:
            for m in tf.getmembers():
                f = tf.extractfile(m) if m.isfile() else None
                if f is not None:
                    out[m.name.removeprefix("./")] = f.read()
        return out

    @property
    def alive(self) -> bool:
        return not self._closed and self._dead_reason is None and self.proc.returncode is None

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._lifetime is not None:
            self._lifetime.cancel()
        try:
            await asyncio.shield(self._kill())
        finally:
            if self.on_close is not None:
                self.on_close(self)
