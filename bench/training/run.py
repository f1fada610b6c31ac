"""Overhead per rollout of `vf.RolloutStream` against the plain `env.generate` path.

    uv run --no-sync python bench/training/run.py            # N=2000 rollouts, c=256, 5 reps
    uv run --no-sync python bench/training/run.py --quick    # smoke: N=256, 1 rep

One process, one environment, one scripted server (`python -m verifiers.testing serve`, 0 ms
latency, in its own process so that this process's CPU time is the client side only), one
pooled client. Both paths ask the server for token ids and logprobs. Per repetition, in turn:

* `generate`: `env.generate(inputs, client, ...)` with `max_concurrent=c` over N/k examples x
  k rollouts: the rollouts and scores, nothing for a trainer yet;
* `generate+build`: the same, then `vf.training.build_group` on every group (what a trainer on
  the plain path would have to do to get samples and advantages);
* `stream`: `vf.RolloutStream` over the same examples, k rollouts per group, c/k groups in
  flight, every group consumed (zero-variance filtering off so that all N come out).

Reported: wall time, rollouts/s, CPU ms per rollout (`time.process_time`, this process), the
medians over repetitions (the order of the three rotates from one repetition to the next), and the stream's ratio and extra CPU per rollout against both plain
variants; and, separately, the CPU cost of `build_group` alone per rollout (best of 5 passes
over one run's outputs), the stream's own per-rollout work without the noise of the rollouts
around it. Variants: `tool` (ToolEnv, 2 model turns and 1 tool call per rollout) and `single`.
Results: stdout and bench/training/results.json (results-quick.json with --quick).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from datasets import Dataset

import verifiers as vf
from verifiers.training import TOKEN_SAMPLING_ARGS, build_group

HERE = Path(__file__).resolve().parent
sys.path.append(str(HERE.parent))  # model_server, results_file

from model_server import start_model_server  # noqa: E402
from results_file import add_options, results_path  # noqa: E402


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def boxed_correct(completion: vf.Messages, answer: str) -> float:
    return float(f"\\boxed{{{answer}}}" in (completion[-1].get("content") or ""))


def make_env(variant: str, n_examples: int) -> vf.Environment:
    rows = [
        {"question": f"What is {i} + {i + 7}?", "answer": str(2 * i + 7)} for i in range(n_examples)
    ]
    ds = Dataset.from_list(rows)
    rubric = vf.Rubric(funcs=[boxed_correct])
    if variant == "tool":
        return vf.ToolEnv(dataset=ds, tools=[add], max_turns=3, rubric=rubric)
    return vf.SingleTurnEnv(dataset=ds, rubric=rubric)


def check(outputs: list[dict[str, Any]], n: int, turns: int) -> None:
    assert len(outputs) == n, f"{len(outputs)} of {n} rollouts"
    bad = [o for o in outputs if o.get("error") or len(o.get("trajectory") or ()) != turns]
    assert not bad, f"{len(bad)} rollouts failed or have the wrong number of turns: {bad[0]}"


async def run_generate(env, client, rows, k, c, build: bool) -> list[dict[str, Any]]:
    inputs = [{**row, "rollout_index": j} for row in rows for j in range(k)]
    res = await env.generate(
        inputs, client, "m", sampling_args=TOKEN_SAMPLING_ARGS, max_concurrent=c
    )
    outputs = res["outputs"]
    if build:
        for i in range(0, len(outputs), k):
            build_group(outputs[i : i + k])
    return outputs


async def run_stream(env, client, rows, k, c) -> list[dict[str, Any]]:
    stream = vf.RolloutStream(
        env,
        client,
        "m",
        rows,
        rollouts_per_example=k,
        max_in_flight=max(1, c // k),
        filter_zero_variance=False,
    )
    outputs: list[dict[str, Any]] = []
    async for group in stream:
        outputs.extend(group.rollouts)  # type: ignore[arg-type]
    return outputs


async def measure(kind: str, env, client, rows, k, c, turns) -> dict[str, float]:
    gc.collect()
    cpu0, t0 = time.process_time(), time.perf_counter()
    if kind == "stream":
        outputs = await run_stream(env, client, rows, k, c)
    else:
        outputs = await run_generate(env, client, rows, k, c, build=kind == "generate+build")
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    n = len(rows) * k
    check(outputs, n, turns)
    return {"wall_s": wall, "rollouts_per_s": n / wall, "cpu_ms_per_rollout": 1000 * cpu / n}


KINDS = ("generate", "generate+build", "stream")


def build_cost_us(outputs: list[dict[str, Any]], k: int, reps: int = 5) -> float:
    """CPU microseconds per rollout of `build_group` alone (samples, masks, advantages): the
    stream's own per-rollout work, without the noise of the rollouts around it; best of `reps`."""
    best = float("inf")
    for _ in range(reps):
        cpu0 = time.process_time()
        for i in range(0, len(outputs), k):
            build_group(outputs[i : i + k])
        best = min(best, time.process_time() - cpu0)
    return 1e6 * best / len(outputs)


async def bench_variant(variant: str, base_url: str, args: argparse.Namespace) -> dict[str, Any]:
    k, c = args.k, args.c
    env = make_env(variant, args.n // k)
    rows = env.get_dataset().to_list()
    turns = 2 if variant == "tool" else 1
    client = vf.OpenAIClient(base_url)
    runs: dict[str, list[dict[str, float]]] = {kind: [] for kind in KINDS}
    try:
        for kind in KINDS:  # warm-up: connections, caches, threads
            await measure(kind, env, client, rows[: max(1, 64 // k)], k, c, turns)
        for rep in range(args.reps):
            for kind in KINDS[rep % 3 :] + KINDS[: rep % 3]:  # rotated: no fixed position
                runs[kind].append(await measure(kind, env, client, rows, k, c, turns))
        outputs = await run_generate(env, client, rows, k, c, build=False)
        build_us = build_cost_us(outputs, k)
    finally:
        await client.aclose()
        await env.teardown()
    med = {
        kind: {m: statistics.median(r[m] for r in runs[kind]) for m in runs[kind][0]}
        for kind in KINDS
    }
    stream_cpu = med["stream"]["cpu_ms_per_rollout"]
    summary = {
        "stream_cpu_ratio_vs_generate": stream_cpu / med["generate"]["cpu_ms_per_rollout"],
        "stream_cpu_ratio_vs_generate_build": stream_cpu
        / med["generate+build"]["cpu_ms_per_rollout"],
        "stream_extra_cpu_ms_vs_generate": stream_cpu - med["generate"]["cpu_ms_per_rollout"],
        "stream_extra_cpu_ms_vs_generate_build": stream_cpu
        - med["generate+build"]["cpu_ms_per_rollout"],
        "build_group_cpu_us_per_rollout": build_us,
        "stream_throughput_ratio_vs_generate": med["stream"]["rollouts_per_s"]
        / med["generate"]["rollouts_per_s"],
    }
    return {"median": med, "runs": runs, "summary": summary}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-n", type=int, default=2000, help="rollouts per run")
    p.add_argument("-k", type=int, default=8, help="rollouts per example (group size)")
    p.add_argument("-c", type=int, default=256, help="rollouts in flight")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--variants", default="tool,single")
    add_options(p, quick="N=256, 1 rep")
    args = p.parse_args()
    if args.quick:
        args.n, args.reps = 256, 1
    server, base_url = start_model_server()
    results: dict[str, Any] = {
        "config": {k: v for k, v in vars(args).items() if k != "out"},
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load": os.getloadavg(),
        },
        "time": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "variants": {},
    }
    try:
        for variant in args.variants.split(","):
            results["variants"][variant] = res = asyncio.run(bench_variant(variant, base_url, args))
            print(f"\n{variant}: N={args.n} k={args.k} c={args.c}, medians of {args.reps}")
            print(f"{'path':<16}{'rollouts/s':>12}{'CPU ms/rollout':>16}")
            for kind, m in res["median"].items():
                print(f"{kind:<16}{m['rollouts_per_s']:>12.0f}{m['cpu_ms_per_rollout']:>16.3f}")
            for key, value in res["summary"].items():
                print(f"  {key}: {value:.3f}")
    finally:
        server.terminate()
        server.wait(timeout=10)
    results["machine"]["load_after"] = os.getloadavg()
    out = results_path(args, HERE)
    out.write_text(json.dumps(results, indent=1) + "\n")
    print(f"\nwritten to {out}")


if __name__ == "__main__":
    main()
