"""Where a cold sandbox's time goes: the steps of create + exec("true") + close, for sandboxes
forked from the zygote, timed with CLOCK_MONOTONIC (one clock for the host and the sandbox).

Run as root from the repo root:  uv run --no-sync python bench/sandbox/breakdown.py [N]
Prints, per step, the median time from the start of `create` to the end of that step, and
the median duration of the step itself (from the end of the step before it)."""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time

from verifiers.sandbox.base import MiB, SandboxSpec
from verifiers.sandbox.bwrap import BwrapProvider

SPEC = SandboxSpec(memory=256 * MiB, pids=64, disk=64 * MiB)

STEPS = {
    "cgroup_made": "host: 5 cgroup v1 groups made, limits written",
    "cloned": "zygote: request read, clone(2) with new user/mnt/pid/net/ipc/uts ns; init runs",
    "zygote_answered": "host: init's pid and pidfd received",
    "cgroups_joined_uid_mapped": "init: cgroups joined, cgroup ns, uid/gid maps, setsid",
    "pipes_connected": "host: agent pipes attached to the event loop",
    "mounts": "init: tmpfs root, /usr /etc binds, /tmp /workspace /dev /proc",
    "pivot_root": "init: hostname, pivot_root, old root detached, root read-only",
    "privileges_dropped": "init: capabilities dropped, no_new_privs, seccomp",
    "agent_forked": "agent (pid 2): forked from init, running",
    "hello": "host: the agent's ready line read",
    "exec_true": 'host: exec("true") answered (the agent runs bash -c true)',
    "close_returned": "host: close returned (init SIGKILLed)",
    "reclaimed": "host: namespace empty (init exited), cgroups removed",
}


async def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    p = BwrapProvider()
    p.trace = True
    await (await p.create(SPEC)).close()
    await p.reclaimed()
    load = os.getloadavg()
    offsets: dict[str, list[float]] = {k: [] for k in STEPS}
    for _ in range(n):
        box = await p.create(SPEC)
        t_hello = time.monotonic()
        await box.exec("true")
        t_exec = time.monotonic()
        await box.close()
        t_close = time.monotonic()
        await p.reclaimed()
        t_reclaimed = time.monotonic()
        marks = dict(box.trace or []) | dict(box.hello.get("trace") or [])
        marks |= {"hello": t_hello, "exec_true": t_exec, "close_returned": t_close}
        marks["reclaimed"] = t_reclaimed
        t0 = marks.pop("create")
        for k in STEPS:
            offsets[k].append(marks[k] - t0)
    await p.close()
    med = sorted((statistics.median(v) * 1000, k) for k, v in offsets.items())
    print(f"{n} cold sandboxes, load {load[0]:.2f} -> {os.getloadavg()[0]:.2f}")
    print("| step (ends when) | at (ms, median) | step (ms) |\n|---|---|---|")
    prev = 0.0
    for at, k in med:
        print(f"| {STEPS[k]} | {at:.2f} | {at - prev:.2f} |")
        prev = at


if __name__ == "__main__":
    asyncio.run(main())
