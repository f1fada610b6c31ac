"""The library's own Python per single-turn rollout, without the HTTP request.

`evaluate` on bench_env's single-turn environment with `OpenAIClient._post` answering a
canned chat completion after one event-loop pass (`await asyncio.sleep(0)`), so what is
measured is everything around the request: the run's lanes, `new_state`, the multi-turn
loop, body building and reply parsing, scoring, the output record, the summary. The HTTP
request itself is what the `floor` side of run.py measures; this isolates the rest, which on
a shared machine the HTTP figures' noise hides.

    uv run --no-sync python bench/rollouts/library_overhead.py [-n 20000] [-c 256] [--reps 3]
        [--base-src DIR]   # also the tree in DIR (a `git archive` export), interleaved

Each measurement is a fresh interpreter; CPU is the process's user+sys time across
`evaluate` (worker threads included), divided by N.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

CHILD = r"""
import asyncio, gc, json, resource, sys
sys.path.insert(0, sys.argv[3])
import bench_env
from canned_client import CannedReply
import verifiers as vf

n, c = int(sys.argv[1]), int(sys.argv[2])
env = bench_env.load_environment(num_examples=n)


async def main():
    client = CannedReply("http://127.0.0.1:9/v1", api_key="x")
    collections = [0, 0, 0]
    gc.callbacks.append(
        lambda phase, info: collections.__setitem__(
            info["generation"], collections[info["generation"]] + (phase == "start")
        )
    )
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    out = await env.evaluate(client, "m", num_examples=n, max_concurrent=c,
                             on_start=lambda *a: None, on_progress=lambda *a: None)
    ru = resource.getrusage(resource.RUSAGE_SELF)
    cpu = ru.ru_utime + ru.ru_stime - ru0.ru_utime - ru0.ru_stime
    print(json.dumps({"us_per_rollout": cpu / n * 1e6, "outputs": len(out["outputs"]),
                      "gc_collections": collections, "verifiers": vf.__file__}))


asyncio.run(main())
"""


def run(n: int, c: int, base_src: str | None, child: str = CHILD) -> dict:
    """The last JSON line `child` prints, run in a fresh interpreter with `n`, `c` and this
    folder as arguments (`base_src` first on PYTHONPATH)."""
    env = dict(os.environ)
    if base_src:
        env["PYTHONPATH"] = base_src
    cp = subprocess.run(
        [sys.executable, "-c", child, str(n), str(c), str(HERE)],
        capture_output=True, text=True, env=env, cwd=ROOT, check=True,
    )  # fmt: skip
    return json.loads(cp.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=20000)
    ap.add_argument("-c", type=int, default=256)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--base-src", default=None)
    args = ap.parse_args()
    sides = {"ours": None, **({"base": args.base_src} if args.base_src else {})}
    seen: dict[str, list[float]] = {side: [] for side in sides}
    for _ in range(args.reps):
        for side, src in sides.items():
            r = run(args.n, args.c, src)
            assert r["outputs"] == args.n, r
            seen[side].append(r["us_per_rollout"])
            print(f"{side:>4} N={args.n} c={args.c}: {r['us_per_rollout']:.1f} us/rollout, "
                  f"GC collections {r['gc_collections']}", flush=True)  # fmt: skip
    for side, values in seen.items():
        runs = ", ".join(f"{v:.1f}" for v in values)
        print(f"{side}: median {statistics.median(values):.1f} us/rollout ({runs})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
