"""Instructions per rollout, counted: the floor, our HTTP client alone, the whole rollout.

The timed benchmarks (run.py, client_floor.py) move by 30-50 % between runs on a shared
machine, more than the differences they are after. This one counts the client process's
user-space instructions under valgrind (`--tool=cachegrind --cache-sim=no`), which do not
depend on what else the machine runs: each side is run once with N requests and once with
N/4 (at least c), and the difference divided by the difference in requests is what one
request or rollout costs (start-up, lazy imports and opening c connections cancel out). Both
runs load the same N-row dataset: building it costs ~300 k instructions a row, which would
otherwise land in the per-rollout figure (run.py times `evaluate` only, after loading).
The sides are client_floor.py's:

  floor    bare aiohttp POST + orjson decode (run.py's `floor` side)
  client   `vf.OpenAIClient.get_response` alone: body building, the pooled POST, reply parsing
  rollout  `env.evaluate` of bench_env's single-turn environment (state, loop, scoring, records)
  lean     (opt-in, `--sides ...,lean`) only what such a rollout cannot do without, with the SDK's
           pieces: state, model call, trajectory step, reward function, output record; a lower
           bound for the library's share

The scripted server (`python -m verifiers.testing serve`) runs outside valgrind. What is not
counted: the kernel's share (socket calls, epoll), which the timed figures include and which
weighs most in the floor, so these ratios are higher than the CPU-time ratios; and time
itself (cache misses, the GIL). Use it to compare trees (`--base-src`), not as the bar.
Wall-clock timeouts scale with valgrind's slowdown like `SyncCalls`' thresholds (aiohttp's
keep-alive, our client's connect and total timeouts): at c=4,096 unscaled, connections expired
between requests and the rollout counted 931 k instead of 735 k.

    uv run --no-sync python bench/rollouts/instructions.py [-n 2000] [-c 256] [--sides floor,client,rollout]
        [--base-src DIR]   # also `rollout` with DIR (a `git archive` export) first on PYTHONPATH
        [--rounds R]       # every side R times, interleaved; medians and each round's ratios

Needs valgrind (Debian: `apt-get install valgrind`); about 1-2 minutes per side.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
VALGRIND_SLOWDOWN = 50
sys.path.insert(0, str(HERE))

from client_floor import lanes  # noqa: E402 - `one(i)` for each i by c coroutines, as there


def run_side(side: str, n: int, c: int, base_url: str, rows: int) -> None:
    """In the measured process: `n` requests or rollouts of one side at concurrency `c`.
    The heap that exists before the run is frozen, as run.py's floor does and as the library
    does for a run (`rollout_gc`), so no side pays for collections of the import-time heap."""
    _scale_keepalive()
    if side == "floor":
        import aiohttp
        import orjson

        url = base_url.rstrip("/") + "/chat/completions"
        headers = {"Content-Type": "application/json", "Authorization": "Bearer EMPTY"}

        async def floor() -> None:
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as s:

                async def one(i: int) -> None:
                    body = orjson.dumps({"model": "m", "messages": messages[i]})
                    async with s.post(url, data=body, headers=headers) as r:
                        orjson.loads(await r.read())

                await lanes(n, c, one)

        messages = _messages(rows)
        _freeze()
        asyncio.run(floor())
        return

    import bench_env

    if side == "client":
        messages = _messages(rows)

        async def client() -> None:
            model = _client(base_url)
            await lanes(n, c, lambda i: model.get_response(messages[i], "m"))
            await model.aclose()

        _freeze()
        asyncio.run(client())
        return

    env = bench_env.load_environment(num_examples=rows, variant="single")
    if side == "lean":
        from verifiers.generation import rollout_gc

        with rollout_gc(c):  # what `evaluate` runs its rollouts under
            asyncio.run(lean_rollouts(env, n, c, base_url))
        return
    # Valgrind runs the process ~50x slower, so the reward function's measured time would send
    # it to worker threads where a normal run calls it on the loop (`SyncCalls`, 0.2 ms):
    # the thresholds scale with the slowdown, so the measured path is the normal one.
    sync = env.rubric.sync_calls
    sync.inline_below_s *= VALGRIND_SLOWDOWN
    sync.slow_after_s *= VALGRIND_SLOWDOWN

    async def rollout() -> None:
        model = _client(base_url)
        out = await env.evaluate(model, "m", num_examples=n, max_concurrent=c)
        await model.aclose()
        assert len(out["outputs"]) == n, len(out["outputs"])

    asyncio.run(rollout())


async def lean_rollouts(env, n: int, c: int, base_url: str) -> None:  # type: ignore[no-untyped-def]
    """What a scored single-turn rollout cannot do without, done with the SDK's own pieces
    and nothing else: the state (`new_state`), the model call, the trajectory step, the
    completion, the reward function called with what it asks for, the output record. No
    rollout loop, hooks, stop conditions, cleanup handlers, rubric plumbing or summary: a
    lower bound for the library's share, not a replacement for it."""
    import bench_env

    from verifiers.envs.output_records import output_record
    from verifiers.envs.trajectory import trajectory_step

    rows = env.eval_inputs(n, 1, False, None)
    model = _client(base_url)
    parser = env.parser
    outputs = []

    async def one(i: int) -> None:
        state = env.new_state(rows[i], model, "m")
        response = await model.get_response(state["prompt"], "m")
        step = trajectory_step(state, state["prompt"], response, None)
        state["trajectory"].append(step)
        state["completion"] = step["completion"]
        state["reward"] = bench_env.correct(
            completion=state["completion"], answer=state["answer"], parser=parser
        )
        state["advantage"] = 0.0
        state["is_completed"] = True
        outputs.append(output_record(state))

    await lanes(n, c, one)
    await model.aclose()
    assert len(outputs) == n, len(outputs)


def _scale_keepalive() -> None:
    """Valgrind runs the process ~50x slower, and at c=4,096 a connection waits longer than
    aiohttp's 15 s keep-alive between its requests, so every request would open a new one
    (and our client's 10 s connect timeout would fire and retry): what a normal run never
    does. Both scale with the slowdown, for every side."""
    import functools

    import aiohttp

    aiohttp.TCPConnector.__init__ = functools.partialmethod(  # type: ignore[method-assign,assignment]
        aiohttp.TCPConnector.__init__, keepalive_timeout=15.0 * VALGRIND_SLOWDOWN
    )


def _client(base_url: str):  # type: ignore[no-untyped-def]
    import verifiers as vf

    return vf.OpenAIClient(
        base_url,
        api_key="EMPTY",
        connect_timeout=10.0 * VALGRIND_SLOWDOWN,
        timeout=600.0 * VALGRIND_SLOWDOWN,
    )


def _freeze() -> None:
    gc.collect()
    gc.freeze()


def _messages(rows: int) -> list[list[dict[str, str]]]:
    import bench_env

    return [
        [
            {"role": "system", "content": bench_env.SYSTEM_PROMPT},
            {"role": "user", "content": row["question"]},
        ]
        for row in bench_env.make_rows(rows)
    ]


def count(side: str, n: int, c: int, base_url: str, src: str | None, rows: int) -> int:
    """User-space instructions of one measured process (valgrind's `I refs`)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONHASHSEED"] = "0"  # the same dict layouts, so the same counts, every run
    if src:
        env["PYTHONPATH"] = src
    cp = subprocess.run(
        ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
         sys.executable, __file__, "--child", side, "-n", str(n), "-c", str(c),
         "--url", base_url, "--rows", str(rows)],
        capture_output=True, text=True, env=env, cwd=ROOT,
    )  # fmt: skip
    found = re.search(r"I\s+refs:\s+([\d,]+)", cp.stderr)
    if cp.returncode != 0 or found is None:
        raise RuntimeError(f"{side} (n={n}) failed:\n{cp.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=2000)
    ap.add_argument("-c", type=int, default=256)
    ap.add_argument("--sides", default="floor,client,rollout")
    ap.add_argument("--base-src", default=None)
    ap.add_argument(
        "--rounds", type=int, default=1, help="count every side this many times, interleaved"
    )
    ap.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--url", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--rows", type=int, default=0, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        run_side(a.child, a.n, a.c, a.url, a.rows)
        return 0
    if shutil.which("valgrind") is None:
        print("needs valgrind (apt-get install valgrind)", file=sys.stderr)
        return 2
    sys.path.insert(0, str(HERE.parent))
    from model_server import start_model_server

    runs = [(side, None) for side in a.sides.split(",")]
    if a.base_src:
        runs.append(("rollout", a.base_src))
    server, base_url = start_model_server()
    # Each side's counts per round: a count moves with how fast the server answers (how
    # many replies one wake-up takes in), so sides are compared inside a round and the
    # medians over rounds are reported.
    rounds: dict[str, list[float]] = {}
    try:
        for r in range(a.rounds):
            for side, src in runs:
                name = side if src is None else f"{side} (base)"
                few = max(a.c, a.n // 4)
                if few >= a.n:
                    raise SystemExit(f"-n must be more than max(c, n/4) = {few}")
                head = count(side, few, a.c, base_url, src, a.n)
                total = count(side, a.n, a.c, base_url, src, a.n)
                rounds.setdefault(name, []).append((total - head) / (a.n - few))
                print(f"{name:15s} {rounds[name][-1] / 1000:8.1f} k instructions per "
                      f"request/rollout ({few} of them: {head / 1e9:.2f} G in all)"
                      + (f", round {r + 1}" if a.rounds > 1 else ""), flush=True)  # fmt: skip
    finally:
        server.terminate()
        server.wait()
    per = {name: statistics.median(values) for name, values in rounds.items()}
    if "floor" in per:
        for name, value in per.items():
            if name == "floor":
                continue
            ratios = [v / f for v, f in zip(rounds[name], rounds["floor"], strict=True)]
            each = f" (each round: {', '.join(f'{x:.2f}' for x in ratios)})" if a.rounds > 1 else ""
            print(f"{name} / floor: {value / per['floor']:.2f}{each}")
    if a.out is not None:
        figures = {"n": a.n, "c": a.c, "per_rollout": per, "rounds": rounds}
        a.out.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
