"""Python bytecodes per single-turn rollout, counted per function: where the library's share goes.

The instruction counts (instructions.py) say how much a rollout costs but not where, and on
this kind of machine timed profiles move with the machine's speed (the same micro-benchmark
took 12.8 and 18.2 us in two runs a minute apart). This counts the bytecodes each Python
function executes (`sys.settrace` with `f_trace_opcodes`) over `evaluate` of bench_env's
single-turn environment, with `OpenAIClient._post` answering a canned reply after one event-loop
pass, as library_overhead.py does: no network, no timing, so two runs of one tree give the
same counts. A bytecode is not a fixed cost (a call or a dict display weighs more than a load),
so use it to find where the work is and to compare trees, not as the bar.

    uv run --no-sync python bench/rollouts/opcodes.py [-n 500] [-c 256] [--top 40]
        [--base-src DIR]   # also the tree in DIR (a `git archive` export), side by side

Each tree runs in a fresh interpreter: a warm-up `evaluate` of 100 rollouts (untraced), then
the traced one. The reward function's thresholds for running on the event loop
(`SyncCalls`) are raised, since tracing slows every call: the path counted is the normal one.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from library_overhead import run  # noqa: E402 - a child interpreter, its last JSON line

CHILD = r"""
import asyncio, collections, json, os, sys
sys.path.insert(0, sys.argv[3])
import bench_env
from canned_client import CannedReply

n, c = int(sys.argv[1]), int(sys.argv[2])
env = bench_env.load_environment(num_examples=n + 100)
sync = env.rubric.sync_calls
sync.inline_below_s, sync.slow_after_s = 10.0, 20.0

counts = collections.Counter()


def tracer(frame, event, arg):
    frame.f_trace_opcodes = True
    code = frame.f_code
    key = f"{os.path.basename(code.co_filename)}:{code.co_name}"

    def local(frame, event, arg):
        if event == "opcode":
            counts[key] += 1
        return local

    return local


async def main():
    client = CannedReply("http://127.0.0.1:9/v1", api_key="x")
    await env.evaluate(client, "m", num_examples=100, max_concurrent=32)
    sys.settrace(tracer)
    out = await env.evaluate(client, "m", num_examples=n, max_concurrent=c)
    sys.settrace(None)
    assert len(out["outputs"]) == n
    print(json.dumps({"per_function": {k: v / n for k, v in counts.items()}}))


asyncio.run(main())
"""


def count(n: int, c: int, src: str | None) -> dict[str, float]:
    per: dict[str, float] = run(n, c, src, CHILD)["per_function"]
    return per


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=500)
    ap.add_argument("-c", type=int, default=256)
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--base-src", default=None)
    a = ap.parse_args()
    ours = count(a.n, a.c, None)
    base = count(a.n, a.c, a.base_src) if a.base_src else None
    print(f"bytecodes per rollout: ours {sum(ours.values()):.1f}", end="")
    print(f", base {sum(base.values()):.1f}" if base is not None else "")
    names = sorted(set(ours) | set(base or {}), key=lambda k: -ours.get(k, 0.0))
    for name in names[: a.top]:
        row = f"{ours.get(name, 0.0):8.1f}"
        if base is not None:
            row += f" {base.get(name, 0.0):8.1f}"
        print(f"{row}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
