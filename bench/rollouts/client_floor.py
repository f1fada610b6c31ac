"""Where the gap to the floor sits: the bare request, our HTTP client alone, the whole rollout.

One process, one scripted server (`python -m verifiers.testing serve`, 0 ms latency), three
sides interleaved per repetition, each N requests at concurrency c over its own connection pool:

  floor    bare aiohttp POST + orjson decode (as run.py's `floor` side)
  client   `vf.OpenAIClient.get_response` alone: body building, the pooled POST, reply parsing
  rollout  `env.evaluate` of bench_env's single-turn environment (state, loop, scoring, records)

CPU is the process's user+sys time across each side's run, divided by N; the heap is frozen
before each (as the library does for a run), so a collection of earlier sides' garbage is not
counted.

    uv run --no-sync python bench/rollouts/client_floor.py [-n 10000] [-c 256] [--reps 3]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import resource
import statistics
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_env
from model_server import start_model_server

import verifiers as vf


def cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


async def lanes(n: int, c: int, one: Callable[[int], Awaitable[object]]) -> None:
    """`one(i)` for i in 0..n-1 by c coroutines, each taking the next index."""
    pending = iter(range(n))

    async def lane() -> None:
        for i in pending:
            await one(i)

    await asyncio.gather(*(lane() for _ in range(min(c, n))))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=10000)
    ap.add_argument("-c", type=int, default=256)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    rows = bench_env.make_rows(a.n)
    messages = [
        [
            {"role": "system", "content": bench_env.SYSTEM_PROMPT},
            {"role": "user", "content": row["question"]},
        ]
        for row in rows
    ]
    env = bench_env.load_environment(num_examples=a.n, variant="single")

    server, base_url = start_model_server()
    try:
        url = base_url.rstrip("/") + "/chat/completions"
        headers = {"Content-Type": "application/json", "Authorization": "Bearer EMPTY"}

        async def floor() -> None:
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as s:

                async def one(i: int) -> None:
                    body = orjson.dumps({"model": "m", "messages": messages[i]})
                    async with s.post(url, data=body, headers=headers) as r:
                        orjson.loads(await r.read())

                await lanes(a.n, a.c, one)

        async def client() -> None:
            model = vf.OpenAIClient(base_url, api_key="EMPTY")
            await lanes(a.n, a.c, lambda i: model.get_response(messages[i], "m"))
            await model.aclose()

        async def rollout() -> None:
            model = vf.OpenAIClient(base_url, api_key="EMPTY")
            await env.evaluate(model, "m", num_examples=a.n, max_concurrent=a.c)
            await model.aclose()

        sides: dict[str, Callable[[], Awaitable[None]]] = {
            "floor": floor,
            "client": client,
            "rollout": rollout,
        }
        per_rollout: dict[str, list[float]] = {name: [] for name in sides}
        for _ in range(a.reps):
            for name, side in sides.items():
                gc.collect()
                gc.freeze()
                before = cpu_s()
                asyncio.run(side())
                per_rollout[name].append((cpu_s() - before) / a.n * 1000)
    finally:
        server.terminate()
        server.wait()
    med = {name: statistics.median(v) for name, v in per_rollout.items()}
    for name, values in per_rollout.items():
        runs = ", ".join(f"{v:.3f}" for v in values)
        print(f"{name:8s} CPU ms per request/rollout: median {med[name]:.3f} ({runs})")
    print(
        f"N={a.n} c={a.c}: client / floor {med['client'] / med['floor']:.2f}, "
        f"rollout / floor {med['rollout'] / med['floor']:.2f}"
    )


if __name__ == "__main__":
    main()
