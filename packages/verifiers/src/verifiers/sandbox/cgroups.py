"""Per-sandbox cgroups: memory, pids and CPU limits, CPU accounting, and a kill that reaches
every process. cgroup v1 (one hierarchy per controller) and v2 (one unified tree).

Groups are made below the caller's own cgroup in each hierarchy, named with the caller's pid so
that groups left by a crashed process can be swept (`sweep_stale`)."""

from __future__ import annotations

import os
import shutil
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from verifiers.sandbox.base import SandboxCreationError

ROOT = Path("/sys/fs/cgroup")
V1_CONTROLLERS = ("memory", "pids", "cpu", "cpuacct", "freezer")
PREFIX = "vf-sbx"


class CgroupUnavailable(RuntimeError):
    pass


def _own_paths() -> dict[str, str]:
    """controller -> path of this process's cgroup, from /proc/self/cgroup."""
    out: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, ctrls, path = line.split(":", 2)
        for c in ctrls.split(",") if ctrls else [""]:
            out[c] = path
    return out


def detect() -> str | None:
    """'v2' on a pure unified hierarchy, 'v1' where the v1 controllers are mounted, else None."""
    if (ROOT / "cgroup.controllers").exists():
        return "v2"
    if all((ROOT / c).is_dir() for c in ("memory", "pids", "cpu", "freezer")):
        return "v1"
    return None


def _write(path: Path, value: str | int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, str(value).encode())
    finally:
        os.close(fd)


_LAYOUT: tuple[int, str | None, dict[str, str], bool] | None = None


def _layout() -> tuple[str | None, dict[str, str], bool]:
    """(version, own paths, memsw available), looked up once per process: they do not change
    under a running process, and reading them costs a few hundred microseconds per sandbox."""
    global _LAYOUT
    if _LAYOUT is None or _LAYOUT[0] != os.getpid():
        version = detect()
        own = {c: path for c, path in _own_paths().items() if c == "" or (ROOT / c).is_dir()}
        memsw = False
        if version == "v1":
            base = ROOT / "memory" / own.get("memory", "/").lstrip("/")
            memsw = (base / "memory.memsw.limit_in_bytes").exists()
        _LAYOUT = (os.getpid(), version, own, memsw)
    return _LAYOUT[1], _LAYOUT[2], _LAYOUT[3]


def _tree(d: Path) -> list[Path]:
    """`d` and the groups below it, parents first; empty if `d` is gone. (os.walk reads the
    entry types from the directory listing; `rglob` stats each of the dozens of control
    files in every group, milliseconds per sandbox on close.)"""
    return [Path(top) for top, _, _ in os.walk(d)]


@dataclass
class Cgroup:
    """One sandbox's group(s). `dirs` are the created directories (one per hierarchy on v1)."""

    name: str
    version: str
    dirs: dict[str, Path] = field(default_factory=dict)

    @classmethod
    def create(cls, name: str, memory: int, pids: int, cpu: float) -> Cgroup:
        version, own, memsw = _layout()
        if version is None:
            raise CgroupUnavailable("no usable cgroup hierarchy under /sys/fs/cgroup")
        cg = cls(name, version)
        try:
            if version == "v2":
                parent = ROOT / own.get("", "/").lstrip("/")
                d = parent / name
                d.mkdir()
                cg.dirs[""] = d
                _write(d / "memory.max", memory)
                if (d / "memory.swap.max").exists():
                    _write(d / "memory.swap.max", 0)
                _write(d / "pids.max", pids)
                _write(d / "cpu.max", f"{int(cpu * 100_000)} 100000")
            else:
                for ctrl in V1_CONTROLLERS:
                    if ctrl not in own:  # not a mounted hierarchy here
                        continue
                    d = ROOT / ctrl / own[ctrl].lstrip("/") / name
                    d.mkdir()
                    cg.dirs[ctrl] = d
                mem = cg.dirs["memory"]
                _write(mem / "memory.limit_in_bytes", memory)
                if memsw:  # no swapping out of the limit
                    _write(mem / "memory.memsw.limit_in_bytes", memory)
                _write(cg.dirs["pids"] / "pids.max", pids)
                # the period is 100 ms unless set otherwise (a new group starts at the default)
                _write(cg.dirs["cpu"] / "cpu.cfs_quota_us", int(cpu * 100_000))
        except OSError as e:
            cg.remove()
            raise CgroupUnavailable(f"cannot set up cgroup {name}: {e}") from e
        return cg

    def join_files(self) -> list[str]:
        """The files a freshly forked child writes "0" (itself) into, before exec, to join the
        group: pass them to `join` in a `preexec_fn`.

        On v1 these are `tasks`, not `cgroup.procs`: a whole-process move takes the kernel's
        global threadgroup lock, whose write side waits out an RCU grace period (measured ~10 ms
        per sandbox on a busy 2-core host, a quarter of a cold start), while a task moving
        itself skips it. A child between fork and exec has exactly one thread, so moving that
        thread moves the process, and everything it later forks starts inside the group."""
        name = "cgroup.procs" if self.version == "v2" else "tasks"
        return [str(d / name) for d in self.dirs.values()]

    def pids(self) -> set[int]:
        found: set[int] = set()
        for d in self.dirs.values():
            for sub in _tree(d):
                try:
                    found.update(int(x) for x in (sub / "cgroup.procs").read_text().split())
                except OSError:
                    pass
        return found

    def kill(self, attempts: int = 50) -> None:
        """SIGKILL every process in the group; v1 freezes first so nothing forks meanwhile."""
        if self.version == "v2":
            d = self.dirs.get("")
            if d is not None and (d / "cgroup.kill").exists():
                try:
                    _write(d / "cgroup.kill", 1)
                except OSError:
                    pass
        freezer = self.dirs.get("freezer")
        for _ in range(attempts):
            pids = self.pids()
            if not pids:
                return
            if freezer is not None:
                try:
                    _write(freezer / "freezer.state", "FROZEN")
                except OSError:
                    pass
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            if freezer is not None:
                try:
                    _write(freezer / "freezer.state", "THAWED")
                except OSError:
                    pass
            time.sleep(0.002)

    def remove(self) -> bool:
        """rmdir the groups (bottom-up); True when all are gone."""
        ok = True
        for d in self.dirs.values():
            try:  # the usual case: no child groups (the sandbox has no cgroupfs to make any)
                d.rmdir()
                continue
            except FileNotFoundError:
                continue
            except OSError:
                pass
            for sub in reversed(_tree(d)[1:]):
                try:
                    sub.rmdir()
                except OSError:
                    pass
            try:
                d.rmdir()
            except FileNotFoundError:
                pass
            except OSError:
                ok = False
        return ok

    def memory_usage(self) -> int | None:
        d = self.dirs.get("memory") or self.dirs.get("")
        if d is None:
            return None
        for f in ("memory.usage_in_bytes", "memory.current"):
            try:
                return int((d / f).read_text())
            except OSError:
                continue
        return None

    def cpu_usage_ns(self) -> int | None:
        d = self.dirs.get("cpuacct")
        if d is not None:
            try:
                return int((d / "cpuacct.usage").read_text())
            except OSError:
                return None
        d = self.dirs.get("")
        if d is not None:
            try:
                for line in (d / "cpu.stat").read_text().splitlines():
                    if line.startswith("usage_usec"):
                        return int(line.split()[1]) * 1000
            except OSError:
                return None
        return None

    def destroy(self, timeout: float = 2.0) -> bool:
        """Kill and remove; retries while exiting processes still hold the group."""
        deadline = time.monotonic() + timeout
        while True:
            self.kill()
            if self.remove() or time.monotonic() > deadline:
                return not any(d.exists() for d in self.dirs.values())
            time.sleep(0.005)


def join(files: list[str]) -> None:
    """Move the calling process into the groups of `join_files`. Meant for a `preexec_fn`, so
    plain os calls only."""
    for f in files:
        fd = os.open(f, os.O_WRONLY)
        try:
            os.write(fd, b"0")
        finally:
            os.close(fd)


def group_name(tag: str) -> str:
    return f"{PREFIX}-{os.getpid()}-{tag}"


def for_sandbox(name: str, memory: int, pids: int, cpu: float) -> Cgroup:
    """`Cgroup.create` for a sandbox being made: where none can be made, that sandbox cannot
    be (`SandboxCreationError`)."""
    try:
        return Cgroup.create(name, memory, pids, cpu)
    except CgroupUnavailable as e:
        raise SandboxCreationError(str(e)) from e


def existing(prefix: str = PREFIX) -> list[Path]:
    """Sandbox cgroup directories currently present below this process's cgroups."""
    version = detect()
    if version is None:
        return []
    own = _own_paths()
    bases = (
        [ROOT / own.get("", "/").lstrip("/")]
        if version == "v2"
        else [ROOT / c / own.get(c, "/").lstrip("/") for c in V1_CONTROLLERS if (ROOT / c).is_dir()]
    )
    out: list[Path] = []
    for b in bases:
        try:
            out.extend(p for p in b.iterdir() if p.is_dir() and p.name.startswith(prefix + "-"))
        except OSError:
            pass
    return out


# Groups whose removal timed out (their last processes were still exiting): retried by
# `reclaim_deferred`, which providers call on close and at exit, so none outlives its provider.
_DEFERRED: list[Cgroup] = []


def defer(cg: Cgroup) -> None:
    _DEFERRED.append(cg)


def remove(cg: Cgroup) -> None:
    """Remove `cg` now, or, while it is still busy, later (`reclaim_deferred`)."""
    if not cg.destroy():
        defer(cg)


def reclaim_deferred(timeout: float = 5.0) -> int:
    """Retry removing deferred groups; returns how many are still present."""
    still = []
    for cg in list(_DEFERRED):
        if not cg.destroy(timeout=timeout):
            still.append(cg)
    _DEFERRED[:] = still
    return len(still)


def sweep_stale() -> int:
    """Remove groups left by processes that no longer exist (a crash, a SIGKILL)."""
    removed = 0
    for d in existing():
        try:
            owner = int(d.name.split("-")[2])
        except (IndexError, ValueError):
            continue
        if owner != os.getpid() and not Path(f"/proc/{owner}").exists():
            cg = Cgroup(d.name, detect() or "v1", {"x": d})
            cg.destroy(timeout=0.5)
            removed += 1
    return removed


def host_problem(tier: str, program: str | None = None, package: str | None = None) -> str | None:
    """Why this host cannot run a local tier that starts sandboxes as another uid in cgroups
    of their own (and needs `program`, from the apt `package`); None when it can."""
    if program is not None and shutil.which(program) is None:
        return f"{program} is not installed (apt-get install {package or program})"
    if os.geteuid() != 0:
        return f"the {tier} tier must run as root to drop to the sandbox uid and set cgroups"
    if detect() is None:
        return "no cgroup hierarchy is mounted at /sys/fs/cgroup"
    return None
