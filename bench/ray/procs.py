"""CPU time and memory of the processes a local Ray cluster runs, read from /proc.

`local_cluster` starts every Ray process from this one (the GCS, the head's monitors, one
raylet per node; each raylet starts its node's agents and worker processes), so the cluster
is this process's descendants. `snapshot()` groups them by role:

- `head`: the GCS, the autoscaler monitor, dashboard and log monitor, and the head node's
  raylet with its agents (what a real cluster's head machine runs);
- `raylets`: the other nodes' raylets with their agents (per-node system processes);
- `workers`: worker processes (actors), on any node;
- `other`: anything else this process started (the scripted model server).

CPU is utime + stime from /proc/<pid>/stat (clock ticks, 10 ms steps); RSS from
/proc/<pid>/status. A process that ends between two snapshots loses its CPU from the delta,
so deltas are taken across batches in which the actors stay up."""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")
HEAD_ONLY = ("gcs_server", "monitor.py", "dashboard.py", "log_monitor.py")
AGENTS = ("DashboardAgent", "RuntimeEnvAgent", "dashboard/agent.py", "runtime_env/agent")


@dataclass
class Proc:
    pid: int
    ppid: int
    cmd: str
    cpu_s: float
    rss: int


@dataclass
class Snapshot:
    procs: dict[int, Proc]
    role: dict[int, str] = field(default_factory=dict)

    def cpu(self, role: str) -> dict[int, float]:
        return {pid: p.cpu_s for pid, p in self.procs.items() if self.role.get(pid) == role}

    def rss(self, role: str, match: str = "") -> int:
        return sum(
            p.rss for pid, p in self.procs.items() if self.role.get(pid) == role and match in p.cmd
        )


def _read(pid: int) -> Proc | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        cmd = (
            Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        )
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    rss = 0
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1]) * 1024
    return Proc(pid, int(fields[1]), cmd.strip(), (int(fields[11]) + int(fields[12])) / TICK, rss)


def snapshot(root: int | None = None, head_store_socket: str | None = None) -> Snapshot:
    """Every descendant of `root` (this process), each with its role (see the module doc).
    `head_store_socket`: the head node's object store socket, which names its raylet."""
    root = root or os.getpid()
    every = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            p = _read(int(entry))
            if p is not None:
                every[p.pid] = p
    children: dict[int, list[int]] = defaultdict(list)
    for p in every.values():
        children[p.ppid].append(p.pid)
    snap = Snapshot({})
    for pid in children[root]:
        p = every[pid]
        if "raylet/raylet" in p.cmd:
            head = (
                head_store_socket is not None
                and f"--store_socket_name={head_store_socket} " in (p.cmd + " ")
            )
            _take(snap, every, children, pid, "head" if head else "raylets", raylet=True)
        elif any(name in p.cmd for name in HEAD_ONLY):
            _take(snap, every, children, pid, "head", raylet=False)
        else:
            _take(snap, every, children, pid, "other", raylet=False)
    return snap


def _take(snap: Snapshot, every: dict, children: dict, pid: int, role: str, raylet: bool) -> None:
    snap.procs[pid] = every[pid]
    snap.role[pid] = role
    stack = list(children[pid])
    while stack:
        child = stack.pop()
        p = every[child]
        snap.procs[child] = p
        if raylet and not any(a in p.cmd for a in AGENTS):
            snap.role[child] = "workers"
        else:
            snap.role[child] = role
        stack.extend(children[child])


def cpu_delta(before: Snapshot, after: Snapshot) -> dict[str, float]:
    """Seconds of CPU each role used between two snapshots (processes present in `after`;
    one started in between counts from zero)."""
    out: dict[str, float] = {}
    for role in ("head", "raylets", "workers", "other"):
        b, a = before.cpu(role), after.cpu(role)
        out[role] = sum(cpu - b.get(pid, 0.0) for pid, cpu in a.items())
    return out
