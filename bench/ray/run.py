"""Environments and sandboxes on a Ray cluster vs in process (issue 25 item 8).

    uv run --no-sync python bench/ray/run.py            # full (~8 min on the shared 2-core host)
    uv run --no-sync python bench/ray/run.py --quick    # smoke (~2 min)

One process (this one) is the orchestrator and the Ray driver. It starts the scripted
OpenAI-compatible model server (`python -m verifiers.testing serve`, 0 ms latency) and a real
multi-node Ray cluster on loopback (`verifiers.ray.testing.local_cluster`): a head with no
CPUs (nothing is scheduled there) and three 1-CPU nodes. Node k carries the custom resources
`upto{k}`..`upto3`, so `RayEnvironment(resources={"uptoK": 1})` places one worker actor on
each of the first K nodes while all three nodes stay up; node 1 also carries `sandbox`.

Rollout modes, one after the other inside each repetition (modes interleaved across
repetitions), each after an unmeasured warm-up batch with every actor loaded:

- `light in-process` / `light ray x3`: `ray_cpu_env` with work=0 (plain arithmetic):
  the orchestrator's own CPU per rollout, in process vs dispatching to 3 nodes;
- `heavy in-process` / `heavy ray x1|x2|x3`: the same environment burning a fixed amount of
  pure-Python CPU per rollout: rollouts/s against the number of nodes.

Per mode: rollouts/s, this process's CPU (getrusage: every thread, Ray's core worker included)
per rollout, and the CPU per rollout of the cluster's processes by role (bench/ray/procs.py:
head = GCS + head raylet + monitors; the other raylets; worker processes; the model server).
Then the sandbox tier (bench/ray/sandboxes.py) and the capacity measurements
(bench/ray/capacity.py). Results: tables on stdout and bench/ray/results.json
(results-quick.json with --quick).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # ray_cpu_env, procs, sandboxes, capacity
sys.path.append(
    str(HERE.parent)
)  # model_server, results_file (appended: bench/ray must not shadow ray)

from model_server import start_model_server  # noqa: E402
from results_file import add_options, results_path  # noqa: E402

MODEL = "mock-model"
NODES = 3


def self_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def node_specs() -> list[dict[str, Any]]:
    """Node k (1-based) offers `upto{j}` for every j >= k: `uptoK` selects the first K nodes."""
    specs = []
    for k in range(1, NODES + 1):
        res: dict[str, float] = {f"upto{j}": 1 for j in range(k, NODES + 1)}
        if k == 1:
            res["sandbox"] = 1
        specs.append({"num_cpus": 1, "resources": res})
    return specs


def head_store_socket() -> str:
    import ray

    head = next(n for n in ray.nodes() if "node:__internal_head__" in n["Resources"])
    return str(head["ObjectStoreSocketName"])


class Rollouts:
    """The inputs and the model client every mode shares."""

    def __init__(
        self, base_url: str, examples: int, light_examples: int, r: int, c: int, warm: int
    ) -> None:
        from verifiers import ClientConfig

        self.config = ClientConfig(api_base_url=base_url, api_key_var="BENCH_NO_KEY")
        self.examples, self.light_examples = examples, light_examples
        self.r, self.c, self.warm = r, c, warm

    def count(self, work: int, r: int) -> int:
        """Examples per measured batch: the light modes take more (they are ~40x faster), and
        as many rollouts at every group size r."""
        return self.examples if work else max(1, self.light_examples * self.r // r)

    def inputs(self, env: Any, work: int, r: int) -> tuple[list[dict], list[dict]]:
        rows = env.eval_inputs(num_examples=self.warm + self.count(work, r), rollouts_per_example=r)
        cut = self.warm * r
        return rows[:cut], rows[cut:]


async def run_mode(
    name: str, work: int, nodes: int, r: int, roll: Rollouts, head_socket: str
) -> dict[str, Any]:
    """One measured batch: in process (`nodes=0`) or on the first `nodes` nodes."""
    import procs
    import ray

    from verifiers import load_environment
    from verifiers.ray import RayEnvironment

    env_args = {"num_examples": roll.warm + roll.count(work, r), "work": work}
    if nodes == 0:
        env: Any = load_environment("ray_cpu_env", **env_args)
    else:
        env = RayEnvironment(
            "ray_cpu_env",
            env_args,
            resources={f"upto{nodes}": 1},
            num_cpus=1,
            workers_per_node=1,
            max_groups_per_worker=roll.c,
        )
    try:
        warm, rows = roll.inputs(env, work, r)
        limit = roll.c * r
        await env.generate(warm, roll.config, MODEL, max_concurrent=limit)
        if nodes:
            workers = env.workers()
            ray.get([w.ready_ref for w in workers])  # every actor loaded before measuring
            assert len({w.node_id for w in workers}) == nodes, "one actor on each node"
        before = procs.snapshot(head_store_socket=head_socket)
        cpu0, t0 = self_cpu(), time.perf_counter()
        result = await env.generate(rows, roll.config, MODEL, max_concurrent=limit)
        wall, cpu = time.perf_counter() - t0, self_cpu() - cpu0
        after = procs.snapshot(head_store_socket=head_socket)
        if nodes:
            stats = [ray.get(w.handle.stats.remote()) for w in env.workers() if not w.dead]
    finally:
        if nodes:
            await env.aclose()
        else:
            await env.teardown()
    outs = result.outputs
    n = len(outs)
    rewards = [o["reward"] for o in outs if not math.isnan(o["reward"])]
    by_role = procs.cpu_delta(before, after)
    res = {
        "mode": name,
        "work": work,
        "nodes": nodes,
        "rollouts": n,
        "rollouts_per_group": r,
        "groups": n // r,
        "errors": sum(1 for o in outs if o.get("error") is not None),
        "mean_reward": sum(rewards) / len(rewards) if rewards else math.nan,
        "wall_s": wall,
        "rollouts_per_s": n / wall,
        "orchestrator_cpu_ms_per_rollout": 1000 * cpu / n,
        "cpu_ms_per_rollout_by_role": {k: 1000 * v / n for k, v in by_role.items()},
        "cpu_cores_by_role": {k: v / wall for k, v in by_role.items()},
        "load_average_1m": os.getloadavg()[0],
    }
    if nodes:
        res["groups_per_worker"] = [s["finished"] for s in stats]
    return res


def modes(work: int, r: int, group_sizes: list[int]) -> list[tuple[str, int, int, int]]:
    """(name, work, nodes, rollouts per group) of every mode, in the order they run."""
    light = [("light in-process", 0, 0, r), (f"light ray x{NODES}", 0, NODES, r)]
    for g in group_sizes:
        if g != r:
            light += [
                (f"light in-process r{g}", 0, 0, g),
                (f"light ray x{NODES} r{g}", 0, NODES, g),
            ]
    heavy = [(f"heavy ray x{k}", work, k, r) for k in range(1, NODES + 1)]
    return [*light, ("heavy in-process", work, 0, r), *heavy]


def median_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The median of each figure over a mode's repetitions (and every repetition's value)."""
    out = dict(runs[-1])
    for key in ("rollouts_per_s", "orchestrator_cpu_ms_per_rollout", "wall_s"):
        out[key] = statistics.median(r[key] for r in runs)
        out[f"{key}_runs"] = [round(r[key], 3) for r in runs]
    for field in ("cpu_ms_per_rollout_by_role", "cpu_cores_by_role"):
        roles = runs[0][field]
        out[field] = {k: statistics.median(r[field][k] for r in runs) for k in roles}
    for key in ("errors", "rollouts", "groups"):
        out[key] = sum(r[key] for r in runs)
    return out


def above_idle(table: list[dict[str, Any]], idle_cores: dict[str, float]) -> None:
    """CPU ms per rollout of each role beyond what it burns idle (heartbeats, resource
    reports, monitors): (cores during the run - cores idle) / rollouts per second."""
    for row in table:
        row["cpu_ms_per_rollout_above_idle"] = {
            role: 1000 * (cores - idle_cores.get(role, 0.0)) / row["rollouts_per_s"]
            for role, cores in row["cpu_cores_by_role"].items()
        }


def print_rollouts(table: list[dict[str, Any]]) -> None:
    def key(row: dict[str, Any]) -> tuple[str, int]:
        return row["mode"].split()[0], row["rollouts_per_group"]

    base = {key(r): r for r in table if r["nodes"] == 0}
    if not base:
        return
    x1 = next((r for r in table if r["mode"] == "heavy ray x1"), None)
    print(
        "\n| mode | rollouts/s | vs in-process | vs ray x1 | orchestrator CPU ms/rollout "
        "| vs in-process | head ms/rollout (cores; above idle) | other raylets | workers "
        "(cores) | model server | errors |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in table:
        b = base[key(r)]
        roles, cores = r["cpu_ms_per_rollout_by_role"], r["cpu_cores_by_role"]
        extra = r.get("cpu_ms_per_rollout_above_idle", {})
        vs_x1 = (
            f"{r['rollouts_per_s'] / x1['rollouts_per_s']:.2f}x"
            if x1 and r["nodes"] and r["work"]
            else ""
        )
        print(
            f"| {r['mode']} | {r['rollouts_per_s']:.1f} "
            f"| {r['rollouts_per_s'] / b['rollouts_per_s']:.2f}x | {vs_x1} "
            f"| {r['orchestrator_cpu_ms_per_rollout']:.3f} "
            f"| {r['orchestrator_cpu_ms_per_rollout'] / b['orchestrator_cpu_ms_per_rollout']:.3f} "
            f"| {roles['head']:.3f} ({cores['head']:.3f}; {extra.get('head', math.nan):+.3f}) "
            f"| {roles['raylets']:.3f} | {roles['workers']:.2f} ({cores['workers']:.2f}) "
            f"| {roles['other']:.2f} | {r['errors']} |"
        )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    add_options(p, quick="smoke run: fewer rollouts, 1 rep")
    p.add_argument("-n", "--examples", type=int, default=96)
    p.add_argument("--light-examples", type=int, default=384, help="examples in light modes")
    p.add_argument("-r", "--rollouts-per-example", type=int, default=4)
    p.add_argument(
        "--group-sizes",
        default="1,4,16",
        help="rollouts per group of the light modes (the same rollouts at each size)",
    )
    p.add_argument("-c", "--groups-in-flight", type=int, default=16)
    p.add_argument("--work", type=int, default=400_000, help="CPU burn iterations per rollout")
    p.add_argument("--reps", type=int, default=2)
    p.add_argument("--warmup", type=int, default=8, help="examples in each unmeasured warm-up")
    p.add_argument("--sandbox-ops", type=int, default=100, help="create+exec+close per side")
    p.add_argument("--actors", type=int, default=24, help="extra actors for the GCS/raylet RSS")
    p.add_argument(
        "--skip", default="", help="comma list of phases to skip: rollouts,sandbox,capacity"
    )
    p.add_argument(
        "--modes", default="", help="only modes whose name starts with one of these (comma list)"
    )
    args = p.parse_args()
    if args.quick:
        args.examples, args.light_examples, args.reps = 16, 64, 1
        args.sandbox_ops, args.actors = 10, 4
        args.group_sizes = str(args.rollouts_per_example)
    skip = {s for s in args.skip.split(",") if s}
    group_sizes = [int(g) for g in args.group_sizes.split(",") if g]
    out = results_path(args, HERE)

    # the actors load `ray_cpu_env` by name: the raylets (started below) pass this on
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(HERE), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    )
    import ray_cpu_env

    burn_ms = []
    for _ in range(5):
        c0 = time.process_time()
        ray_cpu_env.burn(args.work)
        burn_ms.append(1000 * (time.process_time() - c0))

    from verifiers.ray.testing import local_cluster

    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load_before = os.getloadavg()
    model_proc, base_url = start_model_server()
    results: dict[str, Any] = {}
    try:
        t0 = time.perf_counter()
        with local_cluster(node_specs(), head_cpus=0) as cluster:
            results["cluster_start_s"] = round(time.perf_counter() - t0, 1)
            print(f"cluster up in {results['cluster_start_s']} s at {cluster.address}", flush=True)
            head_socket = head_store_socket()
            if "capacity" not in skip:
                import capacity

                results["capacity_idle"] = capacity.idle(head_socket, 3.0 if args.quick else 10.0)
            if "rollouts" not in skip:
                roll = Rollouts(
                    base_url,
                    args.examples,
                    args.light_examples,
                    args.rollouts_per_example,
                    args.groups_in_flight,
                    args.warmup,
                )
                runs: dict[str, list[dict[str, Any]]] = {}
                for rep in range(args.reps):
                    for name, work, nodes, r in modes(
                        args.work, args.rollouts_per_example, group_sizes
                    ):
                        wanted = [m for m in args.modes.split(",") if m]
                        if wanted and not any(name.startswith(m) for m in wanted):
                            continue
                        res = asyncio.run(run_mode(name, work, nodes, r, roll, head_socket))
                        runs.setdefault(name, []).append(res)
                        print(
                            f"rep {rep + 1} {name}: {res['rollouts_per_s']:.1f} rollouts/s, "
                            f"orchestrator {res['orchestrator_cpu_ms_per_rollout']:.3f} ms/rollout, "
                            f"errors {res['errors']}, load {res['load_average_1m']:.1f}",
                            flush=True,
                        )
                table = [median_of(rs) for rs in runs.values()]
                if "capacity_idle" in results:
                    above_idle(table, results["capacity_idle"]["cpu_cores_by_role"])
                results["rollouts"] = table
                results["rollout_runs"] = runs
                print_rollouts(table)
                results["phase_end_s"] = {"rollouts": round(time.perf_counter() - t0, 1)}
            if "sandbox" not in skip:
                import sandboxes

                results["sandbox"] = asyncio.run(sandboxes.measure(args.sandbox_ops, head_socket))
                sandboxes.print_table(results["sandbox"])
                results.setdefault("phase_end_s", {})["sandbox"] = round(
                    time.perf_counter() - t0, 1
                )
            if "capacity" not in skip:
                import capacity

                results["capacity"] = capacity.measure(
                    base_url,
                    args.rollouts_per_example,
                    args.actors,
                    head_socket,
                    results.get("rollouts"),
                )
                capacity.print_table(results["capacity"])
                results.setdefault("phase_end_s", {})["capacity"] = round(
                    time.perf_counter() - t0, 1
                )
    finally:
        model_proc.terminate()
        model_proc.wait(10)
    results["meta"] = {
        "argv": sys.argv[1:],
        "examples": args.examples,
        "light_examples": args.light_examples,
        "rollouts_per_example": args.rollouts_per_example,
        "group_sizes": group_sizes,
        "groups_in_flight": args.groups_in_flight,
        "work": args.work,
        "burn_cpu_ms_median_of_5": round(statistics.median(burn_ms), 2),
        "reps": args.reps,
        "cpus": os.cpu_count(),
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "python": platform.python_version(),
        "ray": __import__("ray").__version__,
        "started_utc": started,
        "finished_utc": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    out.write_text(json.dumps(results, indent=2, default=str) + "\n")
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
