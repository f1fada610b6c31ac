"""The local provider: bubblewrap namespaces + per-sandbox cgroups + the agent.

Each sandbox is `bwrap` started as an unprivileged uid (so the user namespace maps it to uid
1000 inside and nothing inside is ever host root), with new user/pid/net/ipc/uts/mount/cgroup
namespaces, a read-only /usr and minimal /etc, size-capped tmpfs at /workspace and /tmp (pages
charged to the sandbox's memory cgroup), and the agent as its only long-lived process."""

from __future__ import annotations

import array
import asyncio
import atexit
import itertools
import json
import logging
import os
import platform
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from verifiers.sandbox import cgroups
from verifiers.sandbox.agent_client import READ_LIMIT, AgentSandbox
from verifiers.sandbox.base import (
    Provider,
    ProviderUnavailableError,
    SandboxCreationError,
    SandboxSpec,
)
from verifiers.sandbox.runtime import ensure_runtime
from verifiers.sandbox.seccomp import program as seccomp_program

logger = logging.getLogger("verifiers.sandbox")

SANDBOX_UID = int(os.environ.get("VF_SANDBOX_UID", "61000"))
INNER_UID = 1000
AGENT_SRC = Path(__file__).with_name("agent.py")
ZYGOTE_SRC = Path(__file__).with_name("zygote.py")
# The zygote's command line: no paths (every sandbox inherits it as /proc/<pid>/cmdline); its
# stdin is the socket to the host, which sends the configuration first.
ZYGOTE_BOOT = (
    "import json, socket, sys; s = socket.socket(fileno=0); c = json.loads(s.recv(65536)); "
    "sys.path.insert(0, c['agent_dir']); import zygote; zygote.main(s, c)"
)
# Import (from the precompiled .pyc) rather than run the agent as a script.
AGENT_BOOT = "import sys; sys.path.insert(0, '/opt/agent'); import agent; agent.main()"
PATH = "/opt/venv/bin:/usr/local/bin:/usr/bin:/bin"
_counter = itertools.count()

ETC_FILES = {
    "passwd": f"root:x:0:0::/:/usr/sbin/nologin\nsandbox:x:{INNER_UID}:{INNER_UID}::/workspace:/bin/sh\n"
    "nobody:x:65534:65534::/:/usr/sbin/nologin\n",
    "group": f"root:x:0:\nsandbox:x:{INNER_UID}:\nnogroup:x:65534:\n",
    "hosts": "127.0.0.1 localhost sandbox\n::1 localhost\n",
    "nsswitch.conf": "passwd: files\ngroup: files\nhosts: files\n",
    "hostname": "sandbox\n",
}


# Every running sandbox of this process, so that exit (normal or via an unhandled exception)
# kills them and removes their cgroups even when no event loop is left to await a close.
_RUNNING: set[BwrapSandbox] = set()
_SUPPORT: Path | None = None


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
        if self.cgroup is not None and not self.cgroup.destroy():
            cgroups.defer(self.cgroup)  # retried on the provider's close and at exit
        if isinstance(self.proc, ZygoteProcess):
            self.proc.close()
        self._reclaimed = True
        _RUNNING.discard(self)

    async def _kill(self) -> None:
        if self.proc.returncode is None:
            try:
                self.proc.kill()
            except ProcessLookupError:
                pass
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


def make_support_dir(prefix: str = "vf-sbx-") -> Path:
    """A host directory, world-readable, holding a minimal /etc (`etc/`) and the agent with
    its precompiled bytecode (`agent/`), for providers to mount read-only."""
    d = Path(tempfile.mkdtemp(prefix=prefix))
    os.chmod(d, 0o755)
    (d / "etc").mkdir()
    for name, text in ETC_FILES.items():
        (d / "etc" / name).write_text(text)
    for name in ("ld.so.cache", "localtime"):
        src = Path("/etc") / name
        if src.exists():
            shutil.copy(src, d / "etc" / name)
    if Path("/etc/alternatives").is_dir():  # some /usr/bin tools are links through it
        shutil.copytree("/etc/alternatives", d / "etc" / "alternatives", symlinks=True)
    (d / "agent").mkdir()
    shutil.copy2(AGENT_SRC, d / "agent" / "agent.py")
    shutil.copy2(ZYGOTE_SRC, d / "agent" / "zygote.py")
    (d / "root").mkdir()  # the zygote's sandboxes mount their root tmpfs here
    # compile once here: a script run as __main__ would be recompiled in every sandbox
    subprocess.run(
        ["/usr/bin/python3", "-m", "py_compile", *(str(f) for f in (d / "agent").glob("*.py"))],
        capture_output=True,
        check=False,
    )
    for p in [
        d / "etc",
        *(d / "etc").iterdir(),
        *(d / "agent").rglob("*"),
        d / "agent",
        d / "root",
    ]:
        if not p.is_symlink():
            os.chmod(p, 0o755 if p.is_dir() else 0o644)
    return d


class ZygoteError(SandboxCreationError):
    """The zygote could not be started or did not answer."""


class Zygote:
    """Host side of `zygote.py`: starts it (as the sandbox uid, under /usr/bin/python3),
    restarts it if it died, and asks it for new sandboxes. Synchronous and lock-protected (a
    request is one fork in the zygote, well under a millisecond of waiting), so it works from
    any thread and event loop."""

    def __init__(self, support: Path, uid: int, seccomp: bytes | None) -> None:
        self.support, self.uid, self.seccomp = support, uid, seccomp
        self.proc: subprocess.Popen[bytes] | None = None
        self.sock: socket.socket | None = None
        self.lock = threading.Lock()
        self.starts = 0

    def _start(self) -> None:
        self.stop()
        agent_dir = self.support / "agent"
        filt = ""
        if self.seccomp is not None:
            f = self.support / "seccomp.bpf"
            if not f.exists():
                f.write_bytes(self.seccomp)
                os.chmod(f, 0o644)
            filt = str(f)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.proc = subprocess.Popen(
                ["/usr/bin/python3", "-I", "-S", "-c", ZYGOTE_BOOT],
                stdin=theirs.fileno(),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd="/",
                env={"PATH": "/usr/bin:/bin"},
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
            ours.send(json.dumps({"agent_dir": str(agent_dir), "seccomp": filt or None}).encode())
            hello = ours.recv(4096)
        except OSError as e:
            self.stop()
            raise ZygoteError(f"the sandbox zygote did not start: {e}") from e
        if not hello:
            self.stop()
            raise ZygoteError("the sandbox zygote exited at start-up")
        ours.settimeout(10.0)
        self.starts += 1

    def stop(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            self.proc = None

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
                self.stop()
                raise ZygoteError(f"the sandbox zygote stopped answering: {e}") from e
            if not msg:
                self.stop()
                raise ZygoteError("the sandbox zygote exited")
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
        self.stdout = asyncio.StreamReader(limit=READ_LIMIT, loop=loop)
        rpipe = os.fdopen(stdout_r, "rb", buffering=0)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(self.stdout), rpipe)
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
        self.start_timeout = start_timeout
        self._live: set[BwrapSandbox] = set()

    # -- availability ---------------------------------------------------------------------
    @staticmethod
    def unavailable_reason() -> str | None:
        """None when this provider can run; otherwise a sentence saying why not."""
        if shutil.which("bwrap") is None:
            return "bwrap is not installed (apt-get install bubblewrap)"
        if os.geteuid() != 0:
            return "the bwrap provider must run as root to drop to the sandbox uid and set cgroups"
        if cgroups.detect() is None:
            return "no cgroup v1 or v2 hierarchy is mounted at /sys/fs/cgroup"
        if not Path("/usr/bin/python3").exists():
            return "/usr/bin/python3 (the sandbox's interpreter) is missing"
        try:
            if int(Path("/proc/sys/user/max_user_namespaces").read_text()) == 0:
                return "user namespaces are disabled (user.max_user_namespaces = 0)"
        except OSError:
            pass
        return None

    def _setup_dir(self) -> Path:
        """A host directory, readable by the sandbox uid, holding the minimal /etc and the agent
        (one per process, shared by providers, removed at exit)."""
        global _SUPPORT
        if _SUPPORT is None or not _SUPPORT.exists():
            _SUPPORT = make_support_dir()
            atexit.register(shutil.rmtree, _SUPPORT, True)
            cgroups.sweep_stale()
        return _SUPPORT

    def argv(
        self, spec: SandboxSpec, venv: Path | None, seccomp_fd: int | None = None
    ) -> list[str]:
        d = self._setup_dir()
        wd = spec.workdir
        args = [
            "bwrap",
            "--unshare-all",
            "--unshare-user",
            "--disable-userns",  # no nested user namespaces from inside
            "--die-with-parent",
            "--new-session",
            "--uid", str(INNER_UID), "--gid", str(INNER_UID),
            "--hostname", "sandbox",
            "--ro-bind", "/usr", "/usr",
            "--ro-bind", str(d / "etc"), "/etc",
            "--symlink", "usr/bin", "/bin",
            "--symlink", "usr/sbin", "/sbin",
            "--symlink", "usr/lib", "/lib",
            "--symlink", "usr/lib64", "/lib64",
            "--proc", "/proc",
            "--dev", "/dev",
            "--size", str(spec.disk), "--tmpfs", "/tmp",
            "--size", str(spec.disk), "--tmpfs", wd,
            "--ro-bind", str(d / "agent"), "/opt/agent",
        ]  # fmt: skip
        if spec.network:
            args += ["--share-net"]
            if Path("/etc/resolv.conf").exists():
                args += ["--ro-bind", "/etc/resolv.conf", "/etc/resolv.conf"]
        if venv is not None:
            args += ["--ro-bind", str(venv), "/opt/venv"]
        if seccomp_fd is not None:
            args += ["--seccomp", str(seccomp_fd)]
        args += ["--remount-ro", "/", "--chdir", wd, "--clearenv"]
        env = {"PATH": PATH, "HOME": wd, "LANG": "C.UTF-8", "TMPDIR": "/tmp", **spec.env}
        env["VF_WORKDIR"] = wd
        env["VF_SWEEP"] = "1"  # own pid namespace: the agent may kill all but itself
        for k, v in env.items():
            args += ["--setenv", k, v]
        python = "/opt/venv/bin/python" if venv is not None else spec.runtime.python
        # -S: the agent needs no site-packages (faster, smaller); the REPL it starts loads them.
        return [*args, "--", python, "-u", "-I", "-S", "-c", AGENT_BOOT]

    # -- create --------------------------------------------------------------------------
    async def create(self, spec: SandboxSpec | None = None) -> BwrapSandbox:
        spec = spec or SandboxSpec()
        if not self._available:  # checked until it passes once (it costs ~0.3 ms)
            reason = self.unavailable_reason()
            if reason:
                raise ProviderUnavailableError(reason)
            self._available = True
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
        sid = f"{os.getpid()}-{next(_counter)}"
        try:
            cg = cgroups.Cgroup.create(
                cgroups.group_name(str(next(_counter))), spec.memory, spec.pids, spec.cpu
            )
        except cgroups.CgroupUnavailable as e:
            raise SandboxCreationError(str(e)) from e
        procs = cg.join_files()
        uid = self.uid

        def child_setup() -> None:  # runs in the forked child, before exec
            cgroups.join(procs)
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)

        filter_r = None
        if self.seccomp is not None:
            filter_r, filter_w = os.pipe()  # bwrap reads the BPF program from this fd
            os.write(filter_w, self.seccomp)
            os.close(filter_w)
        try:
            proc = await asyncio.create_subprocess_exec(
                *self.argv(spec, venv, filter_r),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
                cwd="/",
                preexec_fn=child_setup,
                pass_fds=(filter_r,) if filter_r is not None else (),
                limit=READ_LIMIT,
            )
        except BaseException as e:  # a cancel here must not leak the cgroup either
            if filter_r is not None:
                os.close(filter_r)
            if not cg.destroy():
                cgroups.defer(cg)
            if isinstance(e, Exception):
                raise SandboxCreationError(f"cannot start bwrap: {e}") from e
            raise
        if filter_r is not None:
            os.close(filter_r)
        box = BwrapSandbox(sid, spec, proc)
        box.cgroup = cg
        _track(box)
        self._live.add(box)
        box.on_close = lambda b: self._live.discard(b)  # type: ignore[arg-type]
        return await box.started(self.start_timeout)

    def zygote(self) -> Zygote:
        if self._zygote is None:
            self._zygote = Zygote(self._setup_dir(), self.uid, self.seccomp)
        return self._zygote

    async def _create_forked(self, spec: SandboxSpec, venv: Path | None) -> BwrapSandbox:
        """A sandbox forked from the zygote: fresh cgroups, namespaces and mounts, no exec."""
        sid = f"{os.getpid()}-{next(_counter)}"
        marks = [("create", time.monotonic())] if self.trace else None
        try:
            cg = cgroups.Cgroup.create(
                cgroups.group_name(str(next(_counter))), spec.memory, spec.pids, spec.cpu
            )
        except cgroups.CgroupUnavailable as e:
            raise SandboxCreationError(str(e)) from e
        if marks is not None:
            marks.append(("cgroup_made", time.monotonic()))
        wd = spec.workdir
        env = {"PATH": PATH, "HOME": wd, "LANG": "C.UTF-8", "TMPDIR": "/tmp", **spec.env}
        env["VF_WORKDIR"] = wd
        env["VF_SWEEP"] = "1"
        d = self._setup_dir()
        req = {
            "workdir": wd,
            "disk": spec.disk,
            "env": env,
            "etc": str(d / "etc"),
            "root": str(d / "root"),
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
        self._live.add(box)
        box.on_close = lambda b: self._live.discard(b)  # type: ignore[arg-type]
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
        await asyncio.gather(*(b.close() for b in list(self._live)), return_exceptions=True)
        await self.reclaimed()
        await asyncio.to_thread(cgroups.reclaim_deferred)
        if self._zygote is not None:
            self._zygote.stop()

    @property
    def live(self) -> int:
        return len(self._live)
