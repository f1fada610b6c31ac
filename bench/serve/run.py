"""Env servers vs in-process rollouts: rollouts/s and orchestrator CPU per rollout.

    python bench/serve/run.py                    # 64 examples x 4 rollouts, servers 1,2,4
    python bench/serve/run.py -n 16 --servers 1  # smoke run

One process (this one) plays the orchestrator. The model is the scripted OpenAI-compatible
server (`python -m verifiers.testing serve`, 0 ms latency) in a process of its own, so its CPU
is not the orchestrator's. The environment is bench/serve/heavy_env.py (arithmetic with a
pure-Python CPU check in the rubric). Modes, one after the other, each after an unmeasured
warm-up batch:

- `in-process`: `env.generate(...)` in this process, `max_concurrent = c * r` rollouts;
- `servers=N`: N `ZMQEnvServer` processes (one worker each) behind one `EnvClientPool`,
  every example sent as one `run_group` request of r rollouts, c groups in flight.

Orchestrator CPU is `time.process_time()` of this process (all its threads: in-process that
includes scoring, with servers it is the client's sockets, health threads and decoding).
Results: a table on stdout and bench/serve/results.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # heavy_env, here and (spawn passes sys.path) in the servers
sys.path.append(str(HERE.parent))  # model_server

from model_server import start_model_server  # noqa: E402

MODEL = "mock-model"


def example_rows(n: int, offset: int, work: int) -> list[dict[str, Any]]:
    import heavy_env

    env = heavy_env.load_environment(num_examples=offset + n, work=work)
    data = env.get_dataset().to_list()[offset:]
    return [{**row, "example_id": offset + i} for i, row in enumerate(data)]


def summarise(name: str, outs: list[dict[str, Any]], wall: float, cpu: float) -> dict[str, Any]:
    errors = sum(1 for o in outs if o.get("error") is not None)
    rewards = [o["reward"] for o in outs if not math.isnan(o["reward"])]
    return {
        "mode": name,
        "rollouts": len(outs),
        "errors": errors,
        "mean_reward": sum(rewards) / len(rewards) if rewards else math.nan,
        "wall_s": wall,
        "rollouts_per_s": len(outs) / wall,
        "client_cpu_ms_per_rollout": 1000 * cpu / len(outs),
    }


def in_process(config: Any, warm: list[dict], rows: list[dict], r: int, c: int, work: int):
    import heavy_env

    env = heavy_env.load_environment(num_examples=len(rows) + len(warm), work=work)

    def expand(batch: list[dict]) -> list[dict]:
        return [{**row, "rollout_index": i} for row in batch for i in range(r)]

    env.generate_sync(expand(warm), config, MODEL, max_concurrent=c * r)
    cpu0, t0 = time.process_time(), time.perf_counter()
    result = env.generate_sync(expand(rows), config, MODEL, max_concurrent=c * r)
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    return summarise("in-process", result["outputs"], wall, cpu)


async def with_servers(
    n: int, workers: int, config: Any, warm: list[dict], rows: list[dict], r: int, c: int, work: int
) -> dict[str, Any]:
    from verifiers.serve import EnvClientPool, spawn_env_server

    servers = [
        spawn_env_server(
            "heavy_env", {"num_examples": 8, "work": work}, num_workers=workers, log_level="WARNING"
        )
        for _ in range(n)
    ]
    pool = EnvClientPool([s.address for s in servers], name="heavy_env")
    try:
        await pool.wait_for_server_startup(timeout=600)
        gate = asyncio.Semaphore(c)

        async def group(row: dict) -> list[dict]:
            async with gate:
                return await pool.run_group([row] * r, config, MODEL, {})

        await asyncio.gather(*(group(row) for row in warm))
        cpu0, t0 = time.process_time(), time.perf_counter()
        groups = await asyncio.gather(*(group(row) for row in rows))
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    finally:
        await pool.close()
        for s in servers:
            s.stop()
    name = f"servers={n}" + (f" x{workers} workers" if workers > 1 else "")
    return summarise(name, [o for g in groups for o in g], wall, cpu)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("-n", "--examples", type=int, default=64)
    p.add_argument("-r", "--rollouts-per-example", type=int, default=4)
    p.add_argument("-c", "--groups-in-flight", type=int, default=16)
    p.add_argument("--work", type=int, default=100_000, help="iterations of the CPU check")
    p.add_argument("--servers", default="1,2,4")
    p.add_argument("--workers-per-server", type=int, default=1)
    p.add_argument("--warmup", type=int, default=8, help="examples in each unmeasured warm-up")
    p.add_argument("--out", default=str(HERE / "results.json"))
    args = p.parse_args()

    from verifiers import ClientConfig

    model_proc, base_url = start_model_server()
    config = ClientConfig(api_base_url=base_url, api_key_var="BENCH_NO_KEY")
    warm = example_rows(args.warmup, 0, args.work)
    rows = example_rows(args.examples, args.warmup, args.work)
    r, c = args.rollouts_per_example, args.groups_in_flight
    load_before = os.getloadavg()
    results = []
    try:
        results.append(in_process(config, warm, rows, r, c, args.work))
        print(results[-1], flush=True)
        for n in [int(x) for x in args.servers.split(",") if x]:
            res = asyncio.run(
                with_servers(n, args.workers_per_server, config, warm, rows, r, c, args.work)
            )
            results.append(res)
            print(res, flush=True)
    finally:
        model_proc.terminate()
        model_proc.wait(10)
    base = results[0]
    print(
        f"\n{len(rows)} examples x {r} rollouts, {c} groups in flight, work={args.work}, "
        f"{os.cpu_count()} CPUs, load average before {load_before[0]:.1f}\n"
    )
    print(
        "| mode | rollouts/s | client CPU ms/rollout | throughput vs in-process "
        "| client CPU vs in-process | errors |"
    )
    print("|---|---|---|---|---|---|")
    for res in results:
        print(
            f"| {res['mode']} | {res['rollouts_per_s']:.1f} | "
            f"{res['client_cpu_ms_per_rollout']:.2f} | "
            f"{res['rollouts_per_s'] / base['rollouts_per_s']:.2f}x | "
            f"{res['client_cpu_ms_per_rollout'] / base['client_cpu_ms_per_rollout']:.3f} | "
            f"{res['errors']} |"
        )
    meta = {
        "examples": len(rows),
        "rollouts_per_example": r,
        "groups_in_flight": c,
        "work": args.work,
        "cpus": os.cpu_count(),
        "load_average_before": load_before,
        "python": platform.python_version(),
        "time_utc": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    Path(args.out).write_text(json.dumps({"meta": meta, "results": results}, indent=2) + "\n")


if __name__ == "__main__":
    main()
