"""Sandbox benchmark: cold and warm latency, throughput, idle memory, 256 at once.

Cold start is measured for the default provider (each sandbox forked from the zygote) and for
the named baseline `BwrapProvider(zygote=False)` (bwrap exec'd per sandbox) in the same run.

Run as root from the repo root:  uv run python bench/sandbox/run.py [--quick]
Writes bench/sandbox/results.json (results-quick.json for --quick) and prints a markdown
table. CPU per op is the harness's own CPU plus the sandbox cgroup's CPU (cpuacct), which does
not depend on the machine's load."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import sys
import time
from pathlib import Path

from verifiers.sandbox import cgroups
from verifiers.sandbox.base import MiB, SandboxSpec
from verifiers.sandbox.bwrap import BwrapProvider
from verifiers.sandbox.pool import SandboxPool
from verifiers.sandbox.runsc import RunscProvider

SPEC = SandboxSpec(memory=256 * MiB, pids=64, disk=64 * MiB)
OUT = Path(__file__).with_name("results.json")


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q / 100 * (len(xs) - 1)))]


def ms(x: float) -> float:
    return round(x * 1000, 2)


def self_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def pss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def proc_cpu(pid: int | None) -> float:
    """utime + stime of one process, in seconds (0 if it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError, TypeError):
        return 0.0


async def cold_series(p: BwrapProvider, n: int, cmd: str | list[str] = "true") -> dict:
    """`n` cold create + exec(cmd) + close in a row: the wall time of each, and the CPU of
    all of it per op: the harness (including the background reclaims, awaited at the end,
    outside the timings), the sandboxes' cgroups, and the zygote's forks."""
    walls, sandbox_cpu = [], 0.0
    z = p.zygote().proc.pid if p.use_zygote and p.zygote().running else None
    z0, c0 = proc_cpu(z), self_cpu()
    for _ in range(n):
        t0 = time.perf_counter()
        box = await p.create(SPEC)
        r = await box.exec(cmd)
        sandbox_cpu += (box.cpu_usage_ns() or 0) / 1e9
        await box.close()
        walls.append(time.perf_counter() - t0)
        assert r.exit_code == 0
    await p.reclaimed()
    zygote_cpu = (proc_cpu(z) - z0) / n
    cpu = (self_cpu() - c0 + sandbox_cpu) / n + zygote_cpu
    return {"walls": walls, "cpu": cpu, "zygote_cpu": zygote_cpu}


async def cold(p: BwrapProvider, n: int) -> dict:
    """The default provider (sandboxes forked from the zygote, reclaimed in the background
    after close) against the named baseline `BwrapProvider(zygote=False)` (bwrap and a fresh
    interpreter exec'd per sandbox: the design before the zygote), in alternating blocks of
    10 so that load changes hit all alike. Also: the zygote with a synchronous close
    (`background_reclaim=False`: close returns once the cgroup is removed), and the zygote
    with `exec(["true"])` (no bash)."""
    base = BwrapProvider(zygote=False)
    sync = BwrapProvider(background_reclaim=False)
    for q in (base, sync):
        await (await q.create(SPEC)).close()
    series = (
        ("cold", p, "true"),
        ("cold_baseline_exec_bwrap", base, "true"),
        ("cold_sync_close", sync, "true"),
        ("cold_argv", p, ["true"]),
    )
    runs: dict[str, list] = {name: [] for name, _, _ in series}
    for _ in range(max(1, n // 10)):
        for name, provider, cmd in series:
            # let the kernel finish the previous block's asynchronous teardown (network
            # namespaces are freed by a kworker) so each block pays only for its own
            await asyncio.sleep(0.3)
            runs[name].append(await cold_series(provider, 10, cmd))
    for q in (base, sync):
        await q.close()
    out: dict = {}
    for name, rs in runs.items():
        walls = [w for r in rs for w in r["walls"]]
        out[f"{name}_create_exec_close_p50_ms"] = ms(pct(walls, 50))
        out[f"{name}_create_exec_close_p99_ms"] = ms(pct(walls, 99))
        out[f"{name}_cpu_per_op_ms"] = ms(statistics.median(r["cpu"] for r in rs))
    out["cold_zygote_cpu_per_op_ms"] = ms(statistics.median(r["zygote_cpu"] for r in runs["cold"]))
    return out


async def warm_acquire(p: BwrapProvider, n: int) -> dict:
    pool = SandboxPool(p, SPEC, size=4)
    await pool.start()
    walls = []
    for _ in range(n):
        await pool.wait_warm()
        t0 = time.perf_counter()
        box = await pool.acquire()
        walls.append(time.perf_counter() - t0)
        await pool.release(box)
    await pool.close()
    t0 = time.perf_counter()
    box = await p.create(SPEC)
    start = time.perf_counter() - t0
    await box.close()
    return {
        "warm_acquire_p50_ms": ms(pct(walls, 50)),
        "warm_acquire_p99_ms": ms(pct(walls, 99)),
        "pool_hits": pool.hits,
        "warm_sandbox_start_ms": ms(start),
    }


async def warm_exec(p: BwrapProvider, n: int) -> dict:
    box = await p.create(SPEC)
    for _ in range(10):
        await box.exec("true")
    walls = []
    c0, s0 = self_cpu(), box.cpu_usage_ns() or 0
    for _ in range(n):
        t0 = time.perf_counter()
        await box.exec("true")
        walls.append(time.perf_counter() - t0)
    cpu = (self_cpu() - c0 + ((box.cpu_usage_ns() or 0) - s0) / 1e9) / n
    pw = []
    for _ in range(n // 2):
        t0 = time.perf_counter()
        await box.python("1 + 1")
        pw.append(time.perf_counter() - t0)
    await box.close()
    return {
        "warm_exec_true_p50_ms": ms(pct(walls, 50)),
        "warm_exec_true_p99_ms": ms(pct(walls, 99)),
        "warm_exec_cpu_per_op_ms": ms(cpu),
        "warm_python_repl_p50_ms": ms(pct(pw, 50)),
    }


async def throughput(p: BwrapProvider, conc: int, seconds: float) -> dict:
    boxes = await p.create_many(conc, SPEC)
    for b in boxes:
        await b.exec("true")
    done = 0
    c0, s0 = self_cpu(), sum(b.cpu_usage_ns() or 0 for b in boxes)
    stop = time.perf_counter() + seconds

    async def worker(b):
        nonlocal done
        while time.perf_counter() < stop:
            await b.exec("true")
            done += 1

    t0 = time.perf_counter()
    await asyncio.gather(*(worker(b) for b in boxes))
    elapsed = time.perf_counter() - t0
    cpu = self_cpu() - c0 + (sum(b.cpu_usage_ns() or 0 for b in boxes) - s0) / 1e9
    await asyncio.gather(*(b.close() for b in boxes))
    return {
        f"warm_cmds_per_s_{conc}_concurrent": round(done / elapsed, 1),
        "throughput_cpu_per_cmd_ms": ms(cpu / max(done, 1)),
    }


async def memory_and_scale(p: BwrapProvider, n: int) -> dict:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    sem = asyncio.Semaphore(16)

    async def one():
        async with sem:
            return await p.create(SPEC)

    t0 = time.perf_counter()
    boxes = await asyncio.gather(*(one() for _ in range(n)))
    create_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    results = await asyncio.gather(*(b.exec("echo ok") for b in boxes))
    exec_all_s = time.perf_counter() - t0
    ok = sum(r.stdout == "ok\n" for r in results)
    await asyncio.sleep(0.5)
    cg = [b.memory_usage() or 0 for b in boxes]
    pss_total = sum(pss(pid) for b in boxes for pid in b.cgroup.pids())
    t0 = time.perf_counter()
    await asyncio.gather(*(b.close() for b in boxes))
    close_s = time.perf_counter() - t0
    await p.reclaimed()
    reclaimed_s = time.perf_counter() - t0
    return {
        "concurrent_sandboxes": n,
        "concurrent_ok": ok,
        "concurrent_create_all_s": round(create_s, 2),
        "concurrent_exec_all_s": round(exec_all_s, 2),
        "concurrent_close_all_s": round(close_s, 2),
        "concurrent_close_all_reclaimed_s": round(reclaimed_s, 2),
        "idle_mem_per_sandbox_cgroup_mb": round(statistics.mean(cg) / MiB, 2),
        "idle_mem_per_sandbox_pss_mb": round(pss_total / n / MiB, 2),
        "leftover_sandboxes": p.live + p.reclaiming,
        "leftover_cgroups": len([g for g in cgroups.existing() if f"-{os.getpid()}-" in g.name]),
    }


async def other_tier(cls, n: int) -> dict:
    """Cold and warm figures for another provider (the gVisor tier), fewer iterations."""
    p = cls()
    name = cls.__name__.removesuffix("Provider").lower()
    cold_walls, cold_cpu = [], []
    for _ in range(n):
        c0, t0 = self_cpu(), time.perf_counter()
        box = await p.create(SPEC)
        await box.exec("true")
        sandbox_cpu = (box.cgroup.cpu_usage_ns() or 0) / 1e9
        await box.close()
        cold_walls.append(time.perf_counter() - t0)
        cold_cpu.append(self_cpu() - c0 + sandbox_cpu)
    box = await p.create(SPEC)
    await box.exec("true")
    walls = []
    c0, s0 = self_cpu(), box.cgroup.cpu_usage_ns() or 0
    for _ in range(n * 5):
        t0 = time.perf_counter()
        await box.exec("true")
        walls.append(time.perf_counter() - t0)
    cpu = (self_cpu() - c0 + ((box.cgroup.cpu_usage_ns() or 0) - s0) / 1e9) / (n * 5)
    await asyncio.sleep(0.5)
    mem = box.cgroup.memory_usage() or 0
    await box.close()
    await p.close()
    return {
        f"{name}_cold_p50_ms": ms(pct(cold_walls, 50)),
        f"{name}_cold_cpu_per_op_ms": ms(statistics.median(cold_cpu)),
        f"{name}_warm_exec_true_p50_ms": ms(pct(walls, 50)),
        f"{name}_warm_exec_cpu_per_op_ms": ms(cpu),
        f"{name}_idle_mem_mb": round(mem / MiB, 2),
    }


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer iterations (a smoke run)")
    ap.add_argument("--runsc", action="store_true", help="also measure the gVisor tier")
    args = ap.parse_args()
    reason = BwrapProvider.unavailable_reason()
    if reason:
        sys.exit(f"bwrap provider unavailable: {reason}")
    q = args.quick
    p = BwrapProvider()
    res: dict = {"load_before": os.getloadavg(), "cpus": os.cpu_count()}
    await (await p.create(SPEC)).close()  # set-up (minimal /etc) out of the timings
    res |= await cold(p, 20 if q else 100)
    res |= await warm_acquire(p, 10 if q else 50)
    res |= await warm_exec(p, 100 if q else 1000)
    res |= await throughput(p, 16, 2 if q else 5)
    res |= await memory_and_scale(p, 32 if q else 256)
    if args.runsc and RunscProvider.unavailable_reason() is None:
        res |= await other_tier(RunscProvider, 5 if q else 20)
    res["load_after"] = os.getloadavg()
    await p.close()
    out = OUT.with_name("results-quick.json") if q else OUT  # a smoke run keeps the full figures
    out.write_text(json.dumps(res, indent=2) + "\n")
    print("| metric | value |\n|---|---|")
    for k, v in res.items():
        print(f"| {k} | {v} |")


if __name__ == "__main__":
    asyncio.run(main())
