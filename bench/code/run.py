"""i3-code grading throughput: problems (and tests) graded per second, 15 tests per problem,
through the environment's own rubric and sandbox path, at several concurrencies, against a
named baseline that runs the very same tests with no isolation.

* `sandbox` (ours): `i3_code.load_environment(...)` with the local bwrap provider; every problem
  is one rollout scored by `env.rubric.score_rollout(state)` (a fresh sandbox from the warm pool,
  `solution.py` written, 15 test commands, sandbox closed and the pool refilled), at most `c`
  rollouts at once.
* `subprocess` (baseline, no isolation): the same programs (same prelude), the same 15 tests per
  problem and the same harness and comparison (`verifiers.envs.code_env.run_test`), each test a
  plain `python3` subprocess in a temporary directory on the host, at most `c` problems at once.

Problems are the i3-code sample's correct solutions (stdin and function-call), each padded or
subsampled to exactly 15 tests; every graded problem must score 1.0 on both sides, or the run
fails. Run as root from the repository root:

    uv run --no-sync python bench/code/run.py                  # N=256, c=16 and 64, 3 reps
    uv run --no-sync python bench/code/run.py --quick          # N=64, 1 rep
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from i3_code import SAMPLE, load_environment

from verifiers.envs.code_env import TestCase, parse_tests, run_test
from verifiers.sandbox.base import ExecResult
from verifiers.sandbox.bwrap import BwrapProvider

HERE = Path(__file__).parent
sys.path.append(str(HERE.parent))  # results_file

from results_file import add_options, results_path  # noqa: E402

TESTS_PER_PROBLEM = 15


def problems(n: int) -> list[tuple[dict[str, Any], str]]:
    """`n` (row, correct program) pairs with exactly 15 tests each, cycling the sample."""
    base = []
    for line in SAMPLE.read_text().splitlines():
        row = json.loads(line)
        info = json.loads(row["info"])
        tests = json.loads(info["tests"])
        k = len(tests["inputs"])
        order = [i % k for i in range(max(k, TESTS_PER_PROBLEM))]  # pad by repeating
        tests = {
            "inputs": [tests["inputs"][i] for i in order],
            "outputs": [tests["outputs"][i] for i in order],
            "fn_name": tests["fn_name"],
        }
        info["tests"] = json.dumps(tests)
        base.append(({"question": row["question"], "info": json.dumps(info)}, info["solutions"]))
    out = []
    for i in range(n):
        row, sols = base[i % len(base)]
        # distinct question text per problem: a distinct (deterministic) test subsample
        out.append(({**row, "question": f"{row['question']}\n(#{i})"}, sols["correct"]))
    return out


def fence(code: str) -> str:
    return f"```python\n{code}```"


class MeteredProvider(BwrapProvider):
    """bwrap, adding up each sandbox's cgroup CPU (agent + tests) when it closes: the test
    processes are the agent's children inside the sandbox, not ours, so `getrusage` misses them."""

    cpu_ns = 0

    async def create(self, spec=None):
        box = await super().create(spec)
        close = box.close

        async def metered_close() -> None:
            if not box._closed:
                MeteredProvider.cpu_ns += box.cpu_usage_ns() or 0
            await close()

        box.close = metered_close
        return box


# -- ours -------------------------------------------------------------------------------------
async def run_sandbox(env: Any, rows: list[dict[str, Any]], programs: list[str], c: int) -> dict:
    sem = asyncio.Semaphore(c)
    states = [
        {
            "prompt": r["prompt"],
            "completion": [{"role": "assistant", "content": fence(p)}],
            "answer": "",
            "info": r["info"],
            "task": r["task"],
        }
        for r, p in zip(rows, programs, strict=True)
    ]

    async def one(s: dict) -> None:
        async with sem:
            await env.rubric.score_rollout(s)

    await env.pool.start()
    await env.pool.wait_warm(min(c, env.pool.size), timeout=120)
    cpu0, sbx0 = _cpu(), MeteredProvider.cpu_ns
    t0 = time.perf_counter()
    await asyncio.gather(*(one(s) for s in states))
    wall = time.perf_counter() - t0
    await env.pool.close()  # the warm spares' CPU (refills) belongs to this run too
    cpu = _cpu() - cpu0 + (MeteredProvider.cpu_ns - sbx0) / 1e9
    bad = [
        (i, s.get("error"), s.get("test_results"))
        for i, s in enumerate(states)
        if s.get("reward") != 1.0
    ]
    if bad:
        raise SystemExit(f"sandbox side: {len(bad)} problems not graded 1.0, first: {bad[0]}")
    tests = sum(len(s["test_results"]) for s in states)
    return _figures(len(states), tests, wall, cpu)


# -- baseline ---------------------------------------------------------------------------------
class HostBox:
    """Just enough of `Sandbox` for `run_test`: plain subprocesses in a temporary directory,
    no isolation (a timeout kills the process group)."""

    def __init__(self, python: str) -> None:
        self.dir = tempfile.mkdtemp(prefix="vf-bench-host-")
        self.python = python  # the interpreter the sandboxes run, for a like-for-like baseline

    async def write_file(self, path: str, data: str) -> None:
        await asyncio.to_thread(Path(self.dir, path).write_text, data)

    async def exec(self, cmd, timeout=30.0, stdin=None, cwd=None, env=None) -> ExecResult:  # noqa: ASYNC109
        t0 = time.perf_counter()
        argv = [self.python if cmd[0] == "python3" else cmd[0], *cmd[1:]]
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=self.dir,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        try:
            out, err = await asyncio.wait_for(
                proc.communicate(stdin.encode() if isinstance(stdin, str) else stdin), timeout
            )
        except TimeoutError:
            os.killpg(proc.pid, 9)
            await proc.wait()
            return ExecResult(-9, "", "", True, False, time.perf_counter() - t0)
        return ExecResult(
            proc.returncode or 0,
            out.decode(errors="replace"),
            err.decode(errors="replace"),
            False,
            False,
            time.perf_counter() - t0,
        )

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


async def run_subprocess(env: Any, rows: list[dict[str, Any]], programs: list[str], c: int) -> dict:
    sem = asyncio.Semaphore(c)
    prepared = [env.prepare_code(p, {}) for p in programs]
    cases: list[list[TestCase]] = [parse_tests(r["info"]["tests"]) for r in rows]
    passed = [0] * len(rows)

    async def one(i: int) -> None:
        async with sem:
            box = HostBox(env.spec.runtime.python)
            try:
                await box.write_file("solution.py", prepared[i])
                for case in cases[i]:
                    r = await run_test(
                        box, case, env.timeout_per_test, env.compare_stdout, env.compare_values
                    )
                    passed[i] += r.passed
            finally:
                box.close()

    cpu0 = _cpu()
    t0 = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(len(rows))))
    wall = time.perf_counter() - t0
    cpu = _cpu() - cpu0
    bad = [i for i, k in enumerate(passed) if k != len(cases[i])]
    if bad:
        raise SystemExit(f"subprocess side: {len(bad)} problems not fully passed, first: {bad[0]}")
    return _figures(len(rows), sum(map(len, cases)), wall, cpu)


# -- reporting --------------------------------------------------------------------------------
def _cpu() -> float:
    """CPU seconds of this process and its reaped children (the baseline's tests; bwrap)."""
    s = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def _figures(n: int, tests: int, wall: float, cpu: float) -> dict:
    return {
        "problems": n,
        "tests": tests,
        "wall_s": round(wall, 3),
        "problems_per_s": round(n / wall, 2),
        "tests_per_s": round(tests / wall, 1),
        "cpu_ms_per_test": round(1000 * cpu / tests, 2),
    }


async def main_async(args: argparse.Namespace) -> dict:
    reason = BwrapProvider.unavailable_reason()
    if reason is not None:
        raise SystemExit(f"the bwrap provider cannot run here: {reason}")
    pairs = problems(args.n)
    results: dict[str, Any] = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "loadavg_start": os.getloadavg(),
        },
        "n": args.n,
        "tests_per_problem": TESTS_PER_PROBLEM,
        "runs": [],
    }
    for c in args.concurrency:
        provider = MeteredProvider()
        env = load_environment(
            source=[row for row, _ in pairs],
            timeout_per_test=args.timeout,
            pool_size=c,
            provider=provider,
        )
        rows = list(env.get_dataset())
        programs = [p for _, p in pairs]
        assert all(r["info"]["num_test_cases"] == TESTS_PER_PROBLEM for r in rows)
        for rep in range(args.reps):  # interleaved: load hits both sides alike
            ours = await run_sandbox(env, rows, programs, c)
            base = await run_subprocess(env, rows, programs, c)
            run = {
                "c": c,
                "rep": rep,
                "sandbox": ours,
                "subprocess": base,
                "ratio_problems_per_s": round(ours["problems_per_s"] / base["problems_per_s"], 3),
                "loadavg": os.getloadavg(),
            }
            results["runs"].append(run)
            print(
                f"c={c:<3} rep={rep} sandbox {ours['problems_per_s']:7.2f} problems/s "
                f"{ours['tests_per_s']:7.1f} tests/s {ours['cpu_ms_per_test']:6.2f} CPU ms/test | "
                f"subprocess {base['problems_per_s']:7.2f} problems/s {base['tests_per_s']:7.1f} "
                f"tests/s {base['cpu_ms_per_test']:6.2f} CPU ms/test | ratio "
                f"{run['ratio_problems_per_s']:.3f} | load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
        await env.teardown()
        await provider.close()
    summary = []
    for c in args.concurrency:
        runs = [r for r in results["runs"] if r["c"] == c]
        med = {
            side: {
                k: statistics.median(r[side][k] for r in runs)
                for k in ("problems_per_s", "tests_per_s", "cpu_ms_per_test")
            }
            for side in ("sandbox", "subprocess")
        }
        med["ratio_problems_per_s"] = statistics.median(r["ratio_problems_per_s"] for r in runs)
        summary.append({"c": c, **med})
    results["median"] = summary
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("-n", type=int, default=256, help="problems per run (15 tests each)")
    ap.add_argument("-c", "--concurrency", type=int, nargs="+", default=[16, 64])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=10.0, help="per-test timeout (s)")
    add_options(ap, quick="N=64, 1 rep")
    args = ap.parse_args()
    if args.quick:
        args.n, args.reps = 64, 1
    out = results_path(args, HERE)
    results = asyncio.run(main_async(args))
    out.write_text(json.dumps(results, indent=1) + "\n")
    print("\nmedians:")
    for m in results["median"]:
        print(
            f"  c={m['c']}: sandbox {m['sandbox']['problems_per_s']:.2f} problems/s "
            f"({m['sandbox']['tests_per_s']:.1f} tests/s), subprocess "
            f"{m['subprocess']['problems_per_s']:.2f} problems/s "
            f"({m['subprocess']['tests_per_s']:.1f} tests/s), ratio {m['ratio_problems_per_s']:.3f}"
        )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
