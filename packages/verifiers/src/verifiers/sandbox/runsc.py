"""The gVisor tier: the same agent inside `runsc` (an application kernel between the sandbox and
the host kernel), from a hand-built OCI bundle, i.e. what containerd's runsc shim does for a
Kubernetes pod with `runtimeClassName: gvisor`.

Debian 12's runsc (2022-12) works here only with `--platform=ptrace`, so it is ~10x slower
than bwrap per cold start and per warm command (measured here: bench/sandbox/README.md, "Before
the zygote"): use it warm, for hostile workloads."""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from verifiers.sandbox import cgroups, contract
from verifiers.sandbox.agent_client import AgentSandbox
from verifiers.sandbox.base import (
    MiB,
    SandboxCreationError,
    SandboxSpec,
)
from verifiers.sandbox.child_agent import ChildAgentProvider
from verifiers.sandbox.support import AGENT_BOOT, SANDBOX_UID, make_support_dir

logger = logging.getLogger("verifiers.sandbox")
_counter = itertools.count()
# The sentry and gofer are Go programs living in the host cgroup: they need threads and memory
# beyond what the workload inside is allowed (gVisor enforces the spec's limits itself).
HOST_PIDS = 1024
# runsc's own environment: nothing of the host's (the sandbox gets the OCI spec's `env`)
RUNSC_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
HOST_MEMORY_HEADROOM = 256 * MiB


class RunscSandbox(AgentSandbox):
    cgroup: cgroups.Cgroup | None = None
    bundle: Path | None = None
    provider: RunscProvider

    def _interrupt(self) -> bool:
        # the agent is the container's init: `runsc kill` signals it inside the sentry
        task = asyncio.get_running_loop().create_task(self.provider._runsc("kill", self.id, "USR1"))
        self._interrupting = task  # keep a reference while it runs
        return True

    async def _kill(self) -> None:
        self._kill_process()
        # Killing the cgroup takes the sentry and gofer down at once. What is left are runsc's
        # state files; `runsc delete -force` would spend ~1.3 s on a sandbox that is already
        # gone, so remove them directly, and fall back to it only if processes survived.
        clean = True
        if self.cgroup is not None:
            clean = await asyncio.to_thread(self.cgroup.destroy)
        if clean:
            for f in (self.provider._base() / "state").glob(f"{self.id}_sandbox:*"):
                f.unlink(missing_ok=True)
        else:
            await self.provider._runsc("delete", "-force", self.id)
            if not await asyncio.to_thread(self.cgroup.destroy, 30.0):  # type: ignore[union-attr]
                cgroups.defer(self.cgroup)  # type: ignore[arg-type]
        try:
            await asyncio.wait_for(self.proc.wait(), 10.0)
        except TimeoutError:
            logger.warning("sandbox %s: runsc did not exit", self.id)
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        if self.bundle is not None:
            shutil.rmtree(self.bundle, ignore_errors=True)


class RunscProvider(ChildAgentProvider[RunscSandbox]):
    name = "runsc (gVisor, ptrace platform)"

    def __init__(self, uid: int = SANDBOX_UID, start_timeout: float = 60.0) -> None:
        super().__init__(uid, start_timeout)

    @staticmethod
    def unavailable_reason() -> str | None:
        return cgroups.host_problem("runsc (rootful here)", "runsc")

    def _base(self) -> Path:
        if self._dir is None:
            d = make_support_dir("vf-sbx-runsc-")
            root = d / "rootfs"  # a read-only skeleton: only mount points and /bin-style links
            for sub in ("usr", "etc", "proc", "dev", "tmp", "workspace", "opt/agent"):
                (root / sub).mkdir(parents=True)
            os.chmod(root / "tmp", 0o1777)
            for link, target in (("bin", "usr/bin"), ("sbin", "usr/sbin"), ("lib", "usr/lib"),
                                 ("lib64", "usr/lib64")):  # fmt: skip
                (root / link).symlink_to(target)
            (d / "state").mkdir()
            self._dir = d
        return self._dir

    async def _runsc(self, *args: str) -> int:
        base = self._base()
        proc = await asyncio.create_subprocess_exec(
            "runsc", "--root", str(base / "state"), *args,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL, env=RUNSC_ENV,
        )  # fmt: skip
        return await proc.wait()

    def config(self, spec: SandboxSpec) -> dict[str, Any]:
        base = self._base()
        env = contract.sandbox_environ(spec)
        tmpfs = ["nosuid", "nodev", "mode=1777", f"size={spec.disk}"]
        return {
            "ociVersion": "1.0.2",
            "process": {
                "terminal": False,
                "user": {"uid": self.uid, "gid": self.uid},
                "args": [spec.runtime.python, "-u", "-I", "-S", "-c", AGENT_BOOT],
                "env": [f"{k}={v}" for k, v in env.items()],
                "cwd": spec.workdir,
                "capabilities": {k: [] for k in ("bounding", "effective", "inheritable", "permitted", "ambient")},
                "rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}],
                "noNewPrivileges": True,
            },
            "root": {"path": str(base / "rootfs"), "readonly": True},
            "hostname": "sandbox",
            "mounts": [
                {"destination": "/proc", "type": "proc", "source": "proc"},
                {"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "mode=755", "size=65536k"]},
                {"destination": "/usr", "type": "bind", "source": "/usr", "options": ["rbind", "ro"]},
                {"destination": "/etc", "type": "bind", "source": str(base / "etc"), "options": ["rbind", "ro"]},
                {"destination": "/opt/agent", "type": "bind", "source": str(base / "agent"), "options": ["rbind", "ro"]},
                {"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": tmpfs},
                {"destination": spec.workdir, "type": "tmpfs", "source": "tmpfs", "options": tmpfs},
            ],
            "linux": {
                "namespaces": [{"type": t} for t in ("pid", "network", "ipc", "uts", "mount")],
                "resources": {"memory": {"limit": spec.memory}, "pids": {"limit": spec.pids}},
            },
        }  # fmt: skip

    async def create(self, spec: SandboxSpec | None = None) -> RunscSandbox:
        spec = await self._admit(spec)
        if spec.runtime.packages or spec.network:
            raise SandboxCreationError(
                "the runsc tier supports neither runtime packages nor network"
            )
        base = self._base()
        n = next(_counter)
        sid = f"vf-{os.getpid()}-{n}"
        bundle = Path(tempfile.mkdtemp(prefix=f"{sid}-", dir=base))
        (bundle / "config.json").write_text(json.dumps(self.config(spec)))
        cg = self._cgroup(
            cgroups.group_name(f"g{n}"),
            spec.memory + HOST_MEMORY_HEADROOM,
            max(HOST_PIDS, spec.pids),
            spec.cpu,
            bundle,
        )
        procs = cg.join_files()

        def child_setup() -> None:
            cgroups.join(procs)

        argv = ["runsc", "--root", str(base / "state"), "--network=none", "--ignore-cgroups",
                "--platform=ptrace", "run", "--bundle", str(bundle), sid]  # fmt: skip
        proc = await self._start_agent(argv, bundle, RUNSC_ENV, child_setup, cg, "runsc")
        box = RunscSandbox(sid, spec, proc)
        box.cgroup, box.bundle, box.provider = cg, bundle, self
        return await self._live.track(box).started(self.start_timeout)
