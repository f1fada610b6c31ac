"""The local provider: bubblewrap namespaces + per-sandbox cgroups + the agent.

Each sandbox is `bwrap` started as an unprivileged uid (so the user namespace maps it to uid
1000 inside and nothing inside is ever host root), with new user/pid/net/ipc/uts/mount/cgroup
namespaces, a read-only /usr and minimal /etc, size-capped tmpfs at /workspace and /tmp (pages
charged to the sandbox's memory cgroup), and the agent as its only long-lived process."""

from __future__ import annotations

import asyncio
import atexit
import itertools
import logging
import os
import platform
import shutil
import signal
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from verifiers.sandbox import cgroups, contract, lifecycle
from verifiers.sandbox.agent_client import READ_LIMIT, AgentSandbox
from verifiers.sandbox.base import (
    Provider,
    ProviderUnavailableError,
    SandboxCreationError,
    SandboxSpec,
)
from verifiers.sandbox.contract import INNER_UID, PATH
from verifiers.sandbox.live import LiveSandboxes
from verifiers.sandbox.runtime import ensure_runtime
from verifiers.sandbox.seccomp import program as seccomp_program
from verifiers.sandbox.support import AGENT_BOOT, SANDBOX_UID, agent_files
from verifiers.sandbox.zygote_host import Zygote, ZygoteError, ZygoteProcess

__all__ = [
    "AGENT_BOOT",
    "INNER_UID",
    "PATH",
    "SANDBOX_UID",
    "BwrapProvider",
    "BwrapSandbox",
    "Zygote",
    "ZygoteError",
    "ZygoteProcess",
]

logger = logging.getLogger("verifiers.sandbox")
BWRAP = shutil.which("bwrap") or "/usr/bin/bwrap"
_counter = itertools.count()


# Every running sandbox of this process, so that exit (normal or via an unhandled exception)
# kills them and removes their cgroups even when no event loop is left to await a close.
_RUNNING: set[BwrapSandbox] = set()


_EXIT_HOOK_REGISTERED = False


def _kill_all_at_exit() -> None:
    for box in list(_RUNNING):
        box.kill_now()
    cgroups.reclaim_deferred()


def _track(box: BwrapSandbox) -> None:
    """Remember a running sandbox; the exit hook is installed with the first one, not at import."""
    global _EXIT_HOOK_REGISTERED
    if not _EXIT_HOOK_REGISTERED:
        atexit.register(_kill_all_at_exit)
        _EXIT_HOOK_REGISTERED = True
    _RUNNING.add(box)


class BwrapSandbox(AgentSandbox):
    cgroup: cgroups.Cgroup | None = None
    # where the provider keeps background reclaims (None: `close` waits for the reclaim)
    reclaims: set[asyncio.Task[None]] | None = None
    _reclaimed = False
    trace: list[tuple[str, float]] | None = None  # host-side start-up steps (provider.trace)

    def kill_now(self) -> None:
        """Synchronous teardown for when no loop can await `close` (exit, a closed loop),
        also of a sandbox closed but not yet reclaimed."""
        if self._reclaimed:
            return
        if not self._closed:
            self._closed = True
            self._dead_reason = self._dead_reason or "killed"
            if self._lifetime is not None:
                self._lifetime.cancel()
            try:
                if isinstance(self.proc, ZygoteProcess):
                    self.proc.kill()
                else:
                    os.kill(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            if self.on_close is not None:
                self.on_close(self)
        self._finish_sync()

    def _finish_sync(self) -> None:
        if self.cgroup is not None:
            cgroups.remove(self.cgroup)  # or retried on the provider's close and at exit
        if isinstance(self.proc, ZygoteProcess):
            self.proc.close()
        self._reclaimed = True
        _RUNNING.discard(self)

    async def _kill(self) -> None:
        self._kill_process()
        if self.reclaims is not None and isinstance(self.proc, ZygoteProcess):
            # Killed: nothing in it runs any more once the kernel has delivered the SIGKILL
            # (init's death ends the pid namespace). Waiting for that and removing the cgroup
            # happen in the background; the provider tracks them, `reclaimed()` awaits them,
            # and a loop that ends first makes them finish synchronously.
            if self.proc.stdin is not None:
                self.proc.stdin.close()
            task = asyncio.get_running_loop().create_task(self._reclaim())
            self.reclaims.add(task)
            task.add_done_callback(self.reclaims.discard)
            return
        await self._reclaim()

    async def _reclaim(self) -> None:
        try:
            # init's (or bwrap's) death takes its pid namespace with it, so the groups are
            # (nearly always) empty by now and only need an rmdir
            try:
                await asyncio.wait_for(self.proc.wait(), 5.0)
            except TimeoutError:
                # seen under heavy namespace churn: the kill is pending inside a slow
                # namespace syscall; it will land, so keep waiting rather than leak the cgroup
                logger.warning("sandbox %s: slow to exit after SIGKILL; waiting", self.id)
                try:
                    await asyncio.wait_for(self.proc.wait(), 120.0)
                except TimeoutError:
                    logger.error("sandbox %s: did not exit after SIGKILL", self.id)
            if self.cgroup is not None:
                # rmdir fails while any process is left in a group, so it doubles as the
                # emptiness check; the kill-and-retry loop runs (in a thread) only then
                if not self.cgroup.remove() and not await asyncio.to_thread(
                    self.cgroup.destroy, 30.0
                ):
                    # processes still exiting after 30 s (a loaded host): retried on the
                    # provider's close and at exit rather than leaked
                    logger.warning("sandbox %s: cgroup still busy; removal deferred", self.id)
                    cgroups.defer(self.cgroup)
        finally:
            if not self._reclaimed:
                if (
                    self.cgroup is not None
                    and any(d.exists() for d in self.cgroup.dirs.values())
                    and not self.cgroup.destroy()  # cancelled midway (its loop is ending)
                ):
                    cgroups.defer(self.cgroup)
                if isinstance(self.proc, ZygoteProcess):
                    self.proc.close()
                elif self.proc.stdin is not None:
                    self.proc.stdin.close()
                self._reclaimed = True
                _RUNNING.discard(self)

    def _interrupt(self) -> bool:
        pid = self._agent_host_pid()
        if pid is None:
            return False
        try:
            os.kill(pid, signal.SIGUSR1)
        except OSError:
            return False
        return True

    def _agent_host_pid(self) -> int | None:
        """The agent's pid on the host: the process in our cgroup whose innermost pid is the
        one the agent reported."""
        if getattr(self, "_host_pid", None) is not None:
            return self._host_pid
        for pid in self.cgroup.pids() if self.cgroup else ():
            try:
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            for line in status.splitlines():
                if line.startswith("NSpid:"):
                    ids = line.split()[1:]
                    if len(ids) > 1 and int(ids[-1]) == self.agent_pid:
                        self._host_pid: int | None = pid
                        return pid
        return None

    def memory_usage(self) -> int | None:
        return self.cgroup.memory_usage() if self.cgroup else None

    def cpu_usage_ns(self) -> int | None:
        return self.cgroup.cpu_usage_ns() if self.cgroup else None


_SWEPT = False


def _sweep_once() -> None:
    """Remove cgroups that crashed processes left (once per process, at the first create)."""
    global _SWEPT
    if not _SWEPT:
        _SWEPT = True
        cgroups.sweep_stale()


def _memfd(data: bytes) -> int:
    """An anonymous file holding `data`, read from its start (what bwrap reads an FD as)."""
    fd = os.memfd_create("vf-sbx", os.MFD_CLOEXEC)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


class BwrapProvider(Provider):
    """bubblewrap + cgroups; must run as root (it drops to `uid` for bwrap and needs to make
    cgroups). `check()` says why it cannot run here, if it cannot."""

    name = "bwrap"

    def __init__(
        self,
        uid: int = SANDBOX_UID,
        start_timeout: float = 30.0,
        seccomp: bool = True,
        zygote: bool = True,
        background_reclaim: bool = True,
    ) -> None:
        """`zygote=False`: start every sandbox by exec'ing bwrap (and a fresh interpreter)
        instead of forking it from the zygote; the same isolation, ~15 ms more per create.
        `background_reclaim` (forked sandboxes): `close` returns once the sandbox is killed,
        and waiting for its namespace to empty and removing its cgroup run in the background
        (`await provider.reclaimed()` waits for them; `close()` of the provider does)."""
        self._reclaims: set[asyncio.Task[None]] | None = set() if background_reclaim else None
        self.uid = uid
        self.use_zygote = zygote and platform.machine() == "x86_64"
        self._zygote: Zygote | None = None
        self._available = False
        self._forked_ok = False  # a forked sandbox has started (else failures fall back)
        # benchmarks: forked sandboxes report when each start-up step ended (hello["trace"])
        self.trace = False
        # the filter (x86_64 only; None elsewhere: namespaces alone then)
        self.seccomp = seccomp_program() if seccomp else None
        self.seccomp_net = seccomp_program(allow_inet=True) if seccomp else None  # network=True
        self.start_timeout = start_timeout
        self._live: LiveSandboxes[BwrapSandbox] = LiveSandboxes()
        self._creating = 0

    # -- availability ---------------------------------------------------------------------
    @staticmethod
    def unavailable_reason() -> str | None:
        """None when this provider can run; otherwise a sentence saying why not."""
        problem = cgroups.host_problem("bwrap", "bwrap", "bubblewrap")
        if problem is not None:
            return problem
        if not Path("/usr/bin/python3").exists():
            return "/usr/bin/python3 (the sandbox's interpreter) is missing"
        try:
            if int(Path("/proc/sys/user/max_user_namespaces").read_text()) == 0:
                return "user namespaces are disabled (user.max_user_namespaces = 0)"
        except OSError:
            pass
        return None

    def argv(
        self, spec: SandboxSpec, venv: Path | None, seccomp_fd: int | None = None
    ) -> tuple[list[str], dict[str, bytes]]:
        """bwrap's arguments, and the files it writes into the sandbox (DEST -> content; each
        becomes `--file FD DEST`, the FD numbers filled in by `launch`). Nothing here names
        a host path but /usr and the system files of `contract.SYSTEM_ETC` at their own path:
        the arguments travel through `--args FD` (bwrap's own /proc/1/cmdline is the sandbox's
        to read) and /etc and the agent are written into its root, not bound from the host
        (a bind shows its source path in /proc/self/mountinfo)."""
        wd = spec.workdir
        args = [
            "--unshare-all",
            "--unshare-user",
            "--disable-userns",  # no nested user namespaces from inside
            "--die-with-parent",
            "--new-session",
            "--uid", str(INNER_UID), "--gid", str(INNER_UID),
            "--hostname", "sandbox",
            "--ro-bind", "/usr", "/usr",
            "--symlink", "usr/bin", "/bin",
            "--symlink", "usr/sbin", "/sbin",
            "--symlink", "usr/lib", "/lib",
            "--symlink", "usr/lib64", "/lib64",
            "--proc", "/proc",
            "--dev", "/dev",
            "--size", str(spec.disk), "--tmpfs", "/tmp",
            "--size", str(spec.disk), "--tmpfs", wd,
            "--dir", "/etc", "--dir", "/opt/agent", "--dir", "/opt/agent/__pycache__",
        ]  # fmt: skip
        files = {f"/etc/{n}": data for n, data in contract.etc_files(spec.network).items()}
        files |= {f"/opt/agent/{rel}": data for rel, data in agent_files().items()}
        for name, target in contract.etc_links().items():
            args += ["--symlink", target, f"/etc/{name}"]
        for path in contract.SYSTEM_ETC:
            args += ["--ro-bind", path, path]
        if spec.network:
            args += ["--share-net"]
        if venv is not None:
            args += ["--ro-bind", str(venv), "/opt/venv"]
        if seccomp_fd is not None:
            args += ["--seccomp", str(seccomp_fd)]
        args += ["--remount-ro", "/", "--chdir", wd, "--clearenv"]
        for k, v in contract.sandbox_environ(spec).items():
            args += ["--setenv", k, v]
        python = "/opt/venv/bin/python" if venv is not None else spec.runtime.python
        # -S: the agent needs no site-packages (faster, smaller); the REPL it starts loads them.
        return [*args, "--", python, "-u", "-I", "-S", "-c", AGENT_BOOT], files

    # -- create --------------------------------------------------------------------------
    async def create(self, spec: SandboxSpec | None = None) -> BwrapSandbox:
        spec = spec or SandboxSpec()
        if not self._available:  # checked until it passes once (it costs ~0.3 ms)
            reason = self.unavailable_reason()
            if reason:
                raise ProviderUnavailableError(reason)
            self._available = True
            _sweep_once()
        await lifecycle.at_loop_end(self, self._loop_ended)
        self._creating += 1  # (the zygote is not stopped under a create in flight)
        try:
            return await self._create(spec)
        finally:
            self._creating -= 1

    async def _create(self, spec: SandboxSpec) -> BwrapSandbox:
        venv = None
        if spec.runtime.packages:  # built once, then cached; a thread, as a build takes long
            venv = await asyncio.to_thread(ensure_runtime, spec.runtime)
        if self.use_zygote and not spec.network and spec.runtime.python == "/usr/bin/python3":
            try:
                try:
                    box = await self._create_forked(spec, venv)
                except ZygoteError as e:  # it died mid-request: once more, with a fresh one
                    logger.warning("sandbox zygote failed (%s); restarting it", e)
                    box = await self._create_forked(spec, venv)
            except SandboxCreationError as e:
                if self._forked_ok:
                    raise
                # never worked on this machine: bwrap gives the same isolation, slower
                logger.warning(
                    "forked sandboxes do not start here (%s); exec'ing bwrap per sandbox", e
                )
                self.use_zygote = False
                if self._zygote is not None:
                    self._zygote.stop()
            else:
                self._forked_ok = True
                return box
        return await self._create_exec(spec, venv)

    async def _create_exec(self, spec: SandboxSpec, venv: Path | None) -> BwrapSandbox:
        """A sandbox started by exec'ing bwrap (and a fresh interpreter)."""
        sid = f"{os.getpid()}-{next(_counter)}"
        cg = cgroups.for_sandbox(
            cgroups.group_name(str(next(_counter))), spec.memory, spec.pids, spec.cpu
        )
        procs = cg.join_files()
        uid = self.uid

        def child_setup() -> None:  # runs in the forked child, before exec
            cgroups.join(procs)
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)

        return await self._exec_bwrap(
            spec, sid, cg, child_setup, lambda seccomp_fd: self.argv(spec, venv, seccomp_fd)
        )

    async def _exec_bwrap(
        self,
        spec: SandboxSpec,
        sid: str,
        cg: cgroups.Cgroup,
        child_setup: Callable[[], None],
        argv: Callable[[int | None], tuple[list[str], dict[str, bytes]]],
        *,
        head: Sequence[str] = (),
        what: str = "bwrap",
        stderr: int | None = asyncio.subprocess.DEVNULL,
    ) -> BwrapSandbox:
        """Exec bwrap in cgroup ``cg`` with ``argv(seccomp_fd)`` (its options and the files it
        writes into the sandbox), after the mounts ``head``; the cgroup is released if it
        fails to start (a cancel included), as a `SandboxCreationError` naming ``what``."""
        fds: list[int] = []  # what bwrap reads: the filter, the files it writes, its arguments
        try:
            program = self.seccomp_net if spec.network else self.seccomp
            seccomp_fd = None
            if program is not None:
                seccomp_fd = _memfd(program)
                fds.append(seccomp_fd)
            args, files = argv(seccomp_fd)
            opts = list(head)
            for dest, data in files.items():
                fds.append(_memfd(data))
                opts += ["--perms", "0644", "--file", str(fds[-1]), dest]
            # the options through a descriptor (bwrap is pid 1 in the sandbox and its
            # /proc/1/cmdline is readable there); only the command after `--` stays on it
            split = args.index("--")
            fds.append(_memfd(b"".join(a.encode() + b"\0" for a in opts + args[:split])))
            proc = await asyncio.create_subprocess_exec(
                "bwrap", "--args", str(fds[-1]), *args[split:],
                executable=BWRAP,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=stderr,
                cwd="/",
                env={},  # bwrap's own environment is /proc/1/environ inside: nothing of ours
                preexec_fn=child_setup,
                pass_fds=fds,
                limit=READ_LIMIT,
            )  # fmt: skip
        except BaseException as e:  # a cancel here must not leak the cgroup either
            cgroups.remove(cg)
            if isinstance(e, Exception):
                raise SandboxCreationError(f"cannot start {what}: {e}") from e
            raise
        finally:
            for fd in fds:
                os.close(fd)
        box = BwrapSandbox(sid, spec, proc)
        box.cgroup = cg
        return await self._started(box)

    async def _started(self, box: BwrapSandbox) -> BwrapSandbox:
        _track(box)
        return await self._live.track(box).started(self.start_timeout)

    def zygote(self) -> Zygote:
        if self._zygote is None:
            self._zygote = Zygote(self.uid, self.seccomp)
        return self._zygote

    async def _create_forked(self, spec: SandboxSpec, venv: Path | None) -> BwrapSandbox:
        """A sandbox forked from the zygote: fresh cgroups, namespaces and mounts, no exec."""
        sid = f"{os.getpid()}-{next(_counter)}"
        marks = [("create", time.monotonic())] if self.trace else None
        cg = cgroups.for_sandbox(
            cgroups.group_name(str(next(_counter))), spec.memory, spec.pids, spec.cpu
        )
        if marks is not None:
            marks.append(("cgroup_made", time.monotonic()))
        req = {
            "workdir": spec.workdir,
            "disk": spec.disk,
            "env": contract.sandbox_environ(spec),
            "venv": str(venv) if venv is not None else None,
            "python": "/opt/venv/bin/python" if venv is not None else spec.runtime.python,
            "inner_uid": INNER_UID,
            "trace": self.trace,
        }
        passed: list[int] = []  # for the zygote (it gets copies): closed here either way
        kept: list[int] = []  # the host's ends of the agent's pipes: closed only on failure
        try:
            for f in cg.join_files():
                passed.append(os.open(f, os.O_WRONLY | os.O_CLOEXEC))
            tasks = list(passed)
            in_r, in_w = os.pipe()
            passed.append(in_r)
            kept.append(in_w)
            out_r, out_w = os.pipe()
            passed.append(out_w)
            kept.append(out_r)
            pid, pidfd = self.zygote().spawn(req, [in_r, out_w, *tasks])
            if marks is not None:
                marks.append(("zygote_answered", time.monotonic()))
        except BaseException as e:
            for fd in passed + kept:
                os.close(fd)
            if not await asyncio.to_thread(cg.destroy):
                cgroups.defer(cg)
            if isinstance(e, ZygoteError):
                raise
            if isinstance(e, Exception):
                raise SandboxCreationError(f"cannot start a sandbox: {e}") from e
            raise
        for fd in passed:
            os.close(fd)
        proc = ZygoteProcess(pid, pidfd)
        box = BwrapSandbox(sid, spec, proc)  # type: ignore[arg-type]
        box.cgroup = cg
        box.reclaims = self._reclaims
        _track(box)
        self._live.track(box)
        try:
            await proc.connect(in_w, out_r)
        except BaseException:
            await box.close()
            raise
        if marks is not None:
            marks.append(("pipes_connected", time.monotonic()))
            box.trace = marks
        return await box.started(self.start_timeout)

    async def reclaimed(self) -> None:
        """Wait until every sandbox closed so far (in this event loop) is fully reclaimed:
        its processes gone and its cgroup removed."""
        loop = asyncio.get_running_loop()
        while pending := [t for t in self._reclaims or () if t.get_loop() is loop]:
            await asyncio.gather(*pending, return_exceptions=True)

    @property
    def reclaiming(self) -> int:
        """Sandboxes closed (killed) whose reclaim is still running in the background."""
        return len(self._reclaims or ())

    async def close(self) -> None:
        """Close every sandbox this provider still has running, wait until all are
        reclaimed, and stop its zygote."""
        await self._live.close()
        await self.reclaimed()
        await asyncio.to_thread(cgroups.reclaim_deferred)
        if self._zygote is not None:
            with self._zygote.lock:  # not in the middle of another thread's request
                self._zygote.stop()

    async def _loop_ended(self) -> None:
        """The event loop this provider made sandboxes in is shutting down: close those still
        open (their pipes belong to that loop) and, once nothing of any loop is left, stop
        and reap the zygote (the next `create`, in any loop, starts a fresh one)."""
        await self._live.close(this_loop_only=True)
        await self.reclaimed()
        if self._zygote is not None and not self._live and not self._creating:
            with self._zygote.lock:  # not while another thread's create is asking it
                if not self._live and not self._creating:
                    self._zygote.stop()

    @property
    def live(self) -> int:
        return len(self._live)
