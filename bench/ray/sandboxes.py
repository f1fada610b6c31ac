"""Sandbox create + exec through the Ray tier vs the local tier, in one run.

Four sides, all up at once and measured in alternating blocks of 10 operations (so load
changes hit all alike); one operation is `create` + `exec("true")` + `close`, timed end to end
from this process, one at a time:

- `local cold`: `BwrapProvider()` (bwrap-zygote) in this process;
- `ray cold`: `RayProvider(warm_per_node=0)`: the same tier run by a host actor on node 1, every
  call a Ray actor call from this process (this process stands where an environment worker
  stands on a real cluster);
- `local warm`: a `SandboxPool` of 2 over the local provider (`acquire` takes a started one);
- `ray warm`: `RayProvider(warm_per_node=2)`: the host's own warm pool.

Before each warm operation the pool is waited on until full (outside the timing), so every
warm operation is a pool hit. Then `exec("true")` alone, 10x the ops, in one sandbox per tier.
CPU per op: this process (getrusage), and every process it started (procs.py: the Ray
cluster, with the host actor, its zygote and sandboxes; the local tier's zygote and its
sandboxes; the idle model server), so both sides count their zygote and sandboxes. That sum
includes the cluster's idle rate (~0.05 cores here) over each block's time.
"""

from __future__ import annotations

import asyncio
import resource
import time
from typing import Any

import procs

BLOCK = 10


def self_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q / 100 * (len(xs) - 1)))]


async def _host_warm(provider: Any, want: int, limit_s: float = 30.0) -> None:
    """Wait until the Ray tier's host holds `want` warm sandboxes (benchmark-only: reads the
    provider's host handles to ask the host actor for its stats)."""
    deadline = time.monotonic() + limit_s
    hosts = list(provider._hosts.values())
    while time.monotonic() < deadline:
        stats = await asyncio.gather(*(h.actor.stats.remote() for h in hosts))
        if sum(s["warm"] for s in stats) >= want:
            return
        await asyncio.sleep(0.01)


async def measure(ops: int, head_socket: str) -> dict[str, Any]:
    from verifiers.sandbox.base import MiB, SandboxSpec
    from verifiers.sandbox.bwrap import BwrapProvider
    from verifiers.sandbox.pool import SandboxPool
    from verifiers.sandbox.ray_tier import RayProvider

    spec = SandboxSpec(memory=256 * MiB, pids=64, disk=64 * MiB)
    local = BwrapProvider()
    pool = SandboxPool(local, spec, size=2)
    ray_cold = RayProvider("auto", node_resource="sandbox", sandboxes_per_node=16, warm_per_node=0)
    ray_warm = RayProvider("auto", node_resource="sandbox", sandboxes_per_node=16, warm_per_node=2)

    async def local_create() -> Any:
        return await local.create(spec)

    async def pool_create() -> Any:
        return await pool.acquire()

    async def ray_cold_create() -> Any:
        return await ray_cold.create(spec)

    async def ray_warm_create() -> Any:
        return await ray_warm.create(spec)

    async def pool_ready() -> None:
        await pool.wait_warm()

    async def ray_ready() -> None:
        await _host_warm(ray_warm, 2)

    sides: dict[str, tuple[Any, Any]] = {
        "local cold": (local_create, None),
        "ray cold": (ray_cold_create, None),
        "local warm": (pool_create, pool_ready),
        "ray warm": (ray_warm_create, ray_ready),
    }
    walls: dict[str, list[float]] = {k: [] for k in sides}
    cpu_self: dict[str, float] = dict.fromkeys(sides, 0.0)
    cpu_started: dict[str, float] = dict.fromkeys(sides, 0.0)
    failures: dict[str, int] = dict.fromkeys(sides, 0)
    try:
        for create, _ in sides.values():  # start every side (zygotes, hosts) unmeasured
            await (await create()).close()
        await pool.start()
        for _ in range(max(1, ops // BLOCK)):
            for name, (create, ready) in sides.items():
                await asyncio.sleep(0.2)  # the previous block's teardown finishes first
                before = procs.snapshot(head_store_socket=head_socket)
                spent = 0.0
                for _ in range(BLOCK):
                    if ready is not None:
                        await ready()
                    c0, t0 = self_cpu(), time.perf_counter()
                    box = await create()
                    result = await box.exec("true")
                    await box.close()
                    walls[name].append(time.perf_counter() - t0)
                    spent += self_cpu() - c0
                    failures[name] += result.exit_code != 0
                after = procs.snapshot(head_store_socket=head_socket)
                delta = procs.cpu_delta(before, after)
                cpu_self[name] += spent
                cpu_started[name] += sum(delta.values())
        exec_walls = await _exec_only(local, ray_cold, spec, 10 * ops)
    finally:
        await pool.close()
        await ray_cold.close()
        await ray_warm.close()
        await local.close()
    out: dict[str, Any] = {"ops_per_side": {k: len(v) for k, v in walls.items()}}
    for name, ws in walls.items():
        n = len(ws)
        out[name] = {
            "create_exec_close_p50_ms": round(1000 * pct(ws, 50), 2),
            "create_exec_close_p90_ms": round(1000 * pct(ws, 90), 2),
            "this_process_cpu_ms_per_op": round(1000 * cpu_self[name] / n, 3),
            "started_processes_cpu_ms_per_op": round(1000 * cpu_started[name] / n, 3),
            "failed": failures[name],
        }
    for name, ws in exec_walls.items():
        out[name] = {"p50_ms": round(1000 * pct(ws, 50), 3), "p90_ms": round(1000 * pct(ws, 90), 3)}
    return out


async def _exec_only(local: Any, ray_provider: Any, spec: Any, n: int) -> dict[str, list[float]]:
    """`exec("true")` in one started sandbox per tier, alternating blocks of 10."""
    boxes = {"exec local": await local.create(spec), "exec ray": await ray_provider.create(spec)}
    walls: dict[str, list[float]] = {k: [] for k in boxes}
    try:
        for box in boxes.values():
            for _ in range(5):
                await box.exec("true")
        for _ in range(max(1, n // BLOCK)):
            for name, box in boxes.items():
                for _ in range(BLOCK):
                    t0 = time.perf_counter()
                    await box.exec("true")
                    walls[name].append(time.perf_counter() - t0)
    finally:
        for box in boxes.values():
            await box.close()
    return walls


def print_table(res: dict[str, Any]) -> None:
    print(
        "\n| sandbox side | create+exec+close p50 ms | p90 ms | this process CPU ms/op "
        "| other processes CPU ms/op | failed |"
    )
    print("|---|---|---|---|---|---|")
    for name in ("local cold", "ray cold", "local warm", "ray warm"):
        r = res[name]
        print(
            f"| {name} | {r['create_exec_close_p50_ms']} | {r['create_exec_close_p90_ms']} "
            f"| {r['this_process_cpu_ms_per_op']} | {r['started_processes_cpu_ms_per_op']} | {r['failed']} |"
        )
    for name in ("exec local", "exec ray"):
        print(
            f'{name} ("true" in a started sandbox): p50 {res[name]["p50_ms"]} ms, '
            f"p90 {res[name]['p90_ms']} ms"
        )
