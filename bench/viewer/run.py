"""Rollout viewer at scale: index build time and time to first byte of its pages at 100,000
rollouts, one of them with a 5 MB completion (issue 28 item 2, "large runs").

Writes two runs of N tool-env-shaped records (verifiers.results.ResultsWriter, as vf-eval
writes them) under bench/.venvs/viewer/, indexes them, serves them with `vf-view`'s server
(uvicorn on 127.0.0.1) and times each page over HTTP: time to first byte (status line and
headers read) and to the last byte, median and max of --reps requests after one warm-up.

    uv run --no-sync python bench/viewer/run.py            # N=100,000 (about 2 min)
    uv run --no-sync python bench/viewer/run.py --quick    # N=5,000 smoke run
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import random
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from verifiers_viewer.index import RolloutIndex
from verifiers_viewer.local import INDEX_DIRNAME
from verifiers_viewer.server import ViewerServer

from verifiers.results import ResultsWriter, write_metadata

ROOT = Path(__file__).resolve().parents[2]
sys.path.append(str(ROOT / "bench"))  # results_file

from results_file import add_options, results_path  # noqa: E402

SCRATCH = ROOT / "bench" / ".venvs" / "viewer"
ROLLOUTS_PER_EXAMPLE = 4
BIG_LINE = 4242  # the record with the 5 MB completion


def record(i: int, rng: random.Random, model_skill: float, big: int) -> dict[str, Any]:
    a, b = rng.randint(1, 999), rng.randint(1, 999)
    right = rng.random() < model_skill
    answer = a + b if right else a + b + 1
    failed = rng.random() < 0.01
    completion: list[dict[str, Any]] = [
        {"role": "assistant", "content": "", "reasoning_content": "Let me add. " * 20,
         "tool_calls": [{"id": f"call_{i}", "type": "function",
                         "function": {"name": "add", "arguments": json.dumps({"a": a, "b": b})}}]},
        {"role": "tool", "tool_call_id": f"call_{i}", "content": str(a + b)},
        {"role": "assistant", "content": f"The sum is **{answer}**. \\boxed{{{answer}}}"},
    ]  # fmt: skip
    if big:
        completion[-1]["content"] = "x" * big + completion[-1]["content"]
    reward = 1.0 if right and not failed else 0.0
    return {
        "example_id": i // ROLLOUTS_PER_EXAMPLE,
        "rollout_index": i % ROLLOUTS_PER_EXAMPLE,
        "prompt": [
            {"role": "system", "content": "Use the add tool, then answer in \\boxed{}."},
            {"role": "user", "content": f"What is {a} + {b}?"},
        ],
        "completion": completion,
        "answer": str(a + b),
        "parsed_answer": None if failed else str(answer),
        "info": {},
        "reward": reward,
        "advantage": None,
        "metrics": {"correct_answer": reward, "num_turns": 2.0, "total_tool_calls": 1.0},
        "error": {"error": "ToolCallError", "message": "add failed", "stage": "rollout",
                  "infra": False, "error_chain_repr": "ToolCallError('add failed')"}
        if failed else None,
        "is_completed": True,
        "is_truncated": False,
        "stop_condition": "has_error" if failed else "no_tools_called",
        "timing": {"generation_ms": 12.0, "scoring_ms": 0.4, "total_ms": 12.6},
        "token_usage": {"input_tokens": 180 + big // 4, "output_tokens": 60 + big // 4},
    }  # fmt: skip


def write_run(run_dir: Path, n: int, skill: float, seed: int, big_bytes: int) -> float:
    rng = random.Random(seed)
    writer = ResultsWriter(run_dir)
    t0 = time.perf_counter()
    batch: list[dict[str, Any]] = []
    for i in range(n):
        batch.append(record(i, rng, skill, big_bytes if i == BIG_LINE % n else 0))
        if len(batch) == 1000:
            writer.write(batch)
            batch.clear()
    writer.write(batch)
    writer.close()
    write_metadata(
        run_dir, {"env_id": "bench-tool", "model": f"skill-{skill}", "status": "complete"}
    )
    return time.perf_counter() - t0


def timed_get(port: int, path: str) -> tuple[float, float, int, int]:
    """(seconds to first byte, seconds to last byte, status, body bytes)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    t0 = time.perf_counter()
    conn.request("GET", path)
    response = conn.getresponse()  # returns once the status line and headers are in
    first = time.perf_counter() - t0
    body = response.read()
    total = time.perf_counter() - t0
    conn.close()
    return first, total, response.status, len(body)


def measure(port: int, path: str, reps: int) -> dict[str, Any]:
    # The first request pays for what is cached until the run grows (counts, the histogram,
    # per-example means): what a viewer sees on the first visit after new rollouts.
    first = timed_get(port, path)
    samples = [timed_get(port, path) for _ in range(reps)]
    statuses = {s[2] for s in samples}
    if statuses != {200}:
        raise SystemExit(f"{path}: status {statuses}")
    return {
        "first_ttfb_ms": round(first[0] * 1000, 1),
        "ttfb_ms_median": round(statistics.median(s[0] for s in samples) * 1000, 1),
        "ttfb_ms_max": round(max(s[0] for s in samples) * 1000, 1),
        "total_ms_median": round(statistics.median(s[1] for s in samples) * 1000, 1),
        "bytes": samples[0][3],
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-n", type=int, default=100_000, help="rollouts per run")
    p.add_argument("--big-mb", type=float, default=5.0, help="size of the one big completion")
    p.add_argument("--reps", type=int, default=7, help="requests per page")
    add_options(p, quick="N=5,000, 3 reps (smoke run)")
    args = p.parse_args()
    if args.quick:
        args.n, args.reps = 5000, 3
    out = results_path(args, ROOT / "bench" / "viewer")
    shutil.rmtree(SCRATCH, ignore_errors=True)
    runs = SCRATCH / "outputs"
    big = int(args.big_mb * 1024 * 1024)
    results: dict[str, Any] = {
        "n": args.n,
        "big_completion_bytes": big,
        "reps": args.reps,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    write_s = write_run(runs / "a", args.n, 0.8, 1, big)
    write_run(runs / "b", args.n, 0.6, 2, 0)
    size = (runs / "a" / "results.jsonl").stat().st_size
    results["records_mb"] = round(size / 1e6, 1)
    results["write_s"] = round(write_s, 2)
    print(f"wrote 2 x {args.n:,} rollouts ({size / 1e6:.0f} MB a run) in {write_s:.1f} s")

    index = RolloutIndex(runs / "a" / "results.jsonl", runs / "a" / INDEX_DIRNAME)
    t0 = time.perf_counter()
    index.refresh()
    results["index_build_s"] = round(time.perf_counter() - t0, 2)
    writer = ResultsWriter(runs / "a")
    rng = random.Random(3)
    writer.write(record(args.n + i, rng, 0.8, 0) for i in range(1000))
    writer.close()
    t0 = time.perf_counter()
    added = index.refresh()
    results["refresh_1000_appended_ms"] = round((time.perf_counter() - t0) * 1000, 1)
    t0 = time.perf_counter()
    index.refresh()
    results["refresh_nothing_new_ms"] = round((time.perf_counter() - t0) * 1000, 2)
    index.close()
    assert added == 1000, added
    RolloutIndex(runs / "b" / "results.jsonl", runs / "b" / INDEX_DIRNAME).refresh()
    print(
        f"index: {results['index_build_s']} s to build, {results['refresh_1000_appended_ms']} ms for 1,000 appended"
    )

    server = ViewerServer(runs, port=0).start()
    last_page = (args.n + 1000 + 49) // 50
    pages = {
        "run page": "/runs/a",
        "run page, sorted by reward desc": "/runs/a?sort=reward&order=desc",
        "run page, failing only": "/runs/a?error=any",
        "run page, metric filter + sort by metric": "/runs/a?metric=correct_answer&metric_max=0&sort=metric:correct_answer",
        "run page, last page": f"/runs/a?page={last_page}",
        "one rollout": "/runs/a/rollouts/77777" if args.n > 77777 else "/runs/a/rollouts/77",
        f"one rollout, {args.big_mb:g} MB completion": f"/runs/a/rollouts/{BIG_LINE % args.n}",
        "one example's group": "/runs/a/examples/123",
        "two runs compared": "/compare?a=a&b=b",
    }
    try:
        results["pages"] = {}
        for name, path in pages.items():
            m = results["pages"][name] = {"path": path, **measure(server.port, path, args.reps)}
            print(
                f"{name:45s} first {m['first_ttfb_ms']:7.1f} ms  then median "
                f"{m['ttfb_ms_median']:7.1f}  max {m['ttfb_ms_max']:7.1f}  ({m['bytes']:,} bytes)"
            )
    finally:
        server.stop()
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"results: {out}")


if __name__ == "__main__":
    sys.exit(main())
