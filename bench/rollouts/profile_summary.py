"""Summarize a py-spy raw (collapsed-stack) profile of worker.py to the evaluate window.

    python bench/rollouts/profile_summary.py PYSPY_RAW.txt [--rollouts 2000]

Keeps the samples taken while `env.evaluate` ran (stacks inside the asyncio loop of
worker.py's `main`, and worker threads), drops start-up (imports, env load), and prints:
  * shares by where the leaf frame lives (our `verifiers`, aiohttp, asyncio, threads, ...),
  * the deepest frame of our library on each stack, inclusive (what our code leads to),
  * leaf functions (own time).
With --rollouts, sample counts are also given as µs per rollout (samples / rate).
"""

from __future__ import annotations

import argparse
import collections
import re

FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")


def parse(line: str) -> tuple[list[tuple[str, str, str]], int]:
    stack, _, count = line.rstrip("\n").rpartition(" ")
    frames = []
    for raw in stack.split(";"):
        m = FRAME.match(raw)
        frames.append((m["func"], m["file"], m["line"] or "") if m else (raw, "", ""))
    return frames, int(count)


def category(file: str, func: str = "") -> str:
    if func.startswith("_GcClock") and file.endswith("worker.py"):
        # py-spy shows a collection under the worker's gc callback frame (see worker.py)
        return "cyclic GC (shown under worker.py's gc callback)"
    if "verifiers/" in file and "site-packages" not in file:
        return "verifiers (ours)"
    for key, name in (
        ("aiohttp/", "aiohttp"),
        ("yarl/", "yarl/multidict"),
        ("multidict/", "yarl/multidict"),
        ("asyncio/", "asyncio"),
        ("concurrent/futures", "threads (executor)"),
        ("threading.py", "threads (executor)"),
        ("bench_env.py", "benchmark env (reward fn)"),
        ("selectors.py", "asyncio"),
        ("json/", "json"),
    ):
        if key in file:
            return name
    return "other: " + file.rsplit("/", 1)[-1]


IDLE_LEAVES = (
    ("_worker", "concurrent/futures/thread.py"),  # executor thread waiting for work
    ("Condition.wait", "threading.py"),
    ("Event.wait", "threading.py"),
)


def in_evaluate(frames: list[tuple[str, str, str]]) -> bool:
    """A sample taken while evaluate ran, and not an idle thread.

    Main thread: inside the asyncio loop but not in worker.py's own `run` coroutine (client
    construction and closing); `evaluate` runs as its own task under `wait_for`. Other
    threads (the library's executor) exist only during evaluate; their idle waits are dropped.
    """
    files = [f for _, f, _ in frames]
    leaf_func, leaf_file, _ = frames[-1]
    if any(leaf_func == fn and leaf_file.endswith(fl) for fn, fl in IDLE_LEAVES):
        return False
    if files and "threading.py" in files[0]:
        return True
    if any(fn == "main.<locals>.run" and fl.endswith("worker.py") for fn, fl, _ in frames):
        return False
    return any(
        fl.endswith("asyncio/base_events.py") and fn.endswith("_run_once") for fn, fl, _ in frames
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("raw")
    ap.add_argument("--rollouts", type=int, default=0)
    ap.add_argument("--rate", type=int, default=1000, help="py-spy sampling rate (Hz)")
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()

    total = kept = 0
    by_cat: collections.Counter[str] = collections.Counter()
    by_ours: collections.Counter[str] = collections.Counter()
    by_leaf: collections.Counter[str] = collections.Counter()
    with open(args.raw) as f:
        for line in f:
            if not line.strip():
                continue
            frames, n = parse(line)
            total += n
            if not in_evaluate(frames):
                continue
            kept += n
            func, file, lineno = frames[-1]
            by_cat[category(file, func)] += n
            by_leaf[f"{func} ({file.split('site-packages/')[-1]}:{lineno})"] += n
            ours = [
                (fn, fl) for fn, fl, _ in frames if "verifiers/" in fl and "site-packages" not in fl
            ]
            if ours:
                fn, fl = ours[-1]
                by_ours[f"{fl.split('verifiers/')[-1]}:{fn}"] += n
            else:
                by_ours["(no verifiers frame: event loop / aiohttp callbacks / threads)"] += n

    def per(n: int) -> str:
        if not args.rollouts:
            return ""
        return f"  {1e6 * n / args.rate / args.rollouts:7.1f} µs/rollout"

    print(
        f"samples: {total} total, {kept} during evaluate ({kept / args.rate:.2f} s at {args.rate} Hz)"
    )
    for title, counter in (
        ("by leaf location", by_cat),
        ("deepest frame of our library (inclusive)", by_ours),
        ("leaf functions (own time)", by_leaf),
    ):
        print(f"\n## {title}")
        for key, n in counter.most_common(args.top):
            print(f"{100 * n / max(1, kept):5.1f}%  {n:6d}{per(n)}  {key}")


if __name__ == "__main__":
    main()
