"""The 'process' tier: a WEAKER fallback for hosts where bubblewrap cannot run.

The agent runs as the unprivileged sandbox uid in its own cgroup (memory, pids, CPU) with
rlimits, a cleared environment and a private 0700 workspace directory, but in the host's
namespaces: files readable by everyone and the host's process list stay visible, and the network
is NOT cut. Use it to develop and to exercise the provider seam, not for untrusted code."""

from __future__ import annotations

import asyncio
import itertools
import os
import resource
import shutil
import signal
import sys
import tempfile
from pathlib import Path

from verifiers.sandbox import cgroups, contract
from verifiers.sandbox.agent_client import READ_LIMIT, AgentSandbox
from verifiers.sandbox.base import (
    Provider,
    ProviderUnavailableError,
    SandboxCreationError,
    SandboxSpec,
)
from verifiers.sandbox.live import LiveSandboxes
from verifiers.sandbox.support import AGENT_SRC, SANDBOX_UID

_counter = itertools.count()


class ProcessSandbox(AgentSandbox):
    cgroup: cgroups.Cgroup | None = None
    workspace: Path | None = None

    async def _kill(self) -> None:
        await asyncio.to_thread(self.kill_now_sync)
        try:
            await asyncio.wait_for(self.proc.wait(), 5.0)
        except TimeoutError:
            pass
        if self.proc.stdin is not None:
            self.proc.stdin.close()

    def kill_now_sync(self) -> None:
        try:
            os.kill(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if self.cgroup is not None:
            cgroups.remove(self.cgroup)
        if self.workspace is not None:
            shutil.rmtree(self.workspace, ignore_errors=True)

    def _interrupt(self) -> bool:
        try:
            os.kill(self.proc.pid, signal.SIGUSR1)
        except OSError:
            return False
        return True

    def kill_now(self) -> None:
        if not self._closed:
            self._closed = True
            self.kill_now_sync()


def _interpreter(spec: SandboxSpec) -> str:
    return spec.runtime.python if Path(spec.runtime.python).exists() else sys.executable


class ProcessProvider(Provider):
    name = "process (weak: no namespaces)"

    def __init__(self, uid: int = SANDBOX_UID, start_timeout: float = 30.0) -> None:
        self.uid = uid
        self.start_timeout = start_timeout
        self._dir: Path | None = None
        self._live: LiveSandboxes[ProcessSandbox] = LiveSandboxes()

    @staticmethod
    def unavailable_reason() -> str | None:
        if os.geteuid() != 0:
            return "the process tier must run as root to drop to the sandbox uid and set cgroups"
        if cgroups.detect() is None:
            return "no cgroup hierarchy is mounted at /sys/fs/cgroup"
        return None

    def _base(self) -> Path:
        if self._dir is None:
            d = Path(tempfile.mkdtemp(prefix="vf-sbx-proc-"))
            os.chmod(d, 0o711)  # traversable, not listable, by the sandbox uid
            shutil.copy(AGENT_SRC, d / "agent.py")
            os.chmod(d / "agent.py", 0o644)
            self._dir = d
        return self._dir

    async def create(self, spec: SandboxSpec | None = None) -> ProcessSandbox:
        spec = spec or SandboxSpec()
        reason = self.unavailable_reason()
        if reason:
            raise ProviderUnavailableError(reason)
        await self._live.close_with_loop()
        if spec.runtime.packages:
            raise SandboxCreationError("the process tier does not support runtime packages")
        base = self._base()
        n = next(_counter)
        ws = base / f"ws-{n}"
        ws.mkdir(mode=0o700)
        os.chown(ws, self.uid, self.uid)
        try:
            cg = cgroups.Cgroup.create(
                cgroups.group_name(f"p{n}"), spec.memory, spec.pids, spec.cpu
            )
        except cgroups.CgroupUnavailable as e:
            shutil.rmtree(ws, ignore_errors=True)
            raise SandboxCreationError(str(e)) from e
        procs, uid, disk = cg.join_files(), self.uid, spec.disk

        def child_setup() -> None:
            cgroups.join(procs)
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            resource.setrlimit(resource.RLIMIT_FSIZE, (disk, disk))
            resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)

        # the same explicit environment as every tier (never the host's), with the workspace
        # for home and temporary files; no sweep: its /proc is the host's
        env = contract.sandbox_environ(spec, home=str(ws), tmp=str(ws), sweep=False)
        python = _interpreter(spec)
        try:
            proc = await asyncio.create_subprocess_exec(
                python, "-u", "-I", "-S", str(base / "agent.py"),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
                cwd=str(ws),
                env=env,
                preexec_fn=child_setup,
                start_new_session=True,
                limit=READ_LIMIT,
            )  # fmt: skip
        except (OSError, RuntimeError) as e:
            cgroups.remove(cg)
            shutil.rmtree(ws, ignore_errors=True)
            raise SandboxCreationError(f"cannot start the agent: {e}") from e
        box = ProcessSandbox(f"proc-{os.getpid()}-{n}", spec, proc)
        box.cgroup, box.workspace = cg, ws
        return await self._live.track(box).started(self.start_timeout)

    async def close(self) -> None:
        await self._live.close_and_reclaim()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
