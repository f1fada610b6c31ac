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
from verifiers.sandbox.agent_client import AgentSandbox
from verifiers.sandbox.base import (
    SandboxCreationError,
    SandboxSpec,
)
from verifiers.sandbox.child_agent import ChildAgentProvider
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


class ProcessProvider(ChildAgentProvider[ProcessSandbox]):
    name = "process (weak: no namespaces)"

    def __init__(self, uid: int = SANDBOX_UID, start_timeout: float = 30.0) -> None:
        super().__init__(uid, start_timeout)

    @staticmethod
    def unavailable_reason() -> str | None:
        return cgroups.host_problem("process")

    def _base(self) -> Path:
        if self._dir is None:
            d = Path(tempfile.mkdtemp(prefix="vf-sbx-proc-"))
            os.chmod(d, 0o711)  # traversable, not listable, by the sandbox uid
            shutil.copy(AGENT_SRC, d / "agent.py")
            os.chmod(d / "agent.py", 0o644)
            self._dir = d
        return self._dir

    async def create(self, spec: SandboxSpec | None = None) -> ProcessSandbox:
        spec = await self._admit(spec)
        if spec.runtime.packages:
            raise SandboxCreationError("the process tier does not support runtime packages")
        base = self._base()
        n = next(_counter)
        ws = base / f"ws-{n}"
        ws.mkdir(mode=0o700)
        os.chown(ws, self.uid, self.uid)
        cg = self._cgroup(cgroups.group_name(f"p{n}"), spec.memory, spec.pids, spec.cpu, ws)
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
        argv = [python, "-u", "-I", "-S", str(base / "agent.py")]
        proc = await self._start_agent(argv, ws, env, child_setup, cg, "the agent")
        box = ProcessSandbox(f"proc-{os.getpid()}-{n}", spec, proc)
        box.cgroup, box.workspace = cg, ws
        return await self._live.track(box).started(self.start_timeout)
