"""Benchmark: math-verify grading through MathRubric's process pool vs inline.

Grades N boxed answers (numeric, fractions, decimals, radicals, pi, polynomials, sets;
~20% wrong) three ways and checks that every way gives the same scores:

* inline: the classic call ``verify(parse(gold), parse(resp))`` in this process,
  sequentially (math-verify's signal timeouts work: this is the main thread);
* ``MathRubric(max_workers=k).correct_answer`` for each pool size k, all submitted at once.

Then one pathological answer (``\\boxed{10^{10^{10}}}``) is inserted in the middle and
everything is timed again: it must cost about one timeout, not more, and not change any
other score. A last run sets the pool's hard timeout below math-verify's own, to show the
SIGKILL path (the worker is killed at the hard timeout and replaced).

    env -u PYTHONDONTWRITEBYTECODE uv run python bench/mathverify/run.py
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import time
from dataclasses import asdict, dataclass
from typing import Any

from math_verify import parse, verify

from verifiers.rubrics.math_rubric import MathRubric, warm_up

PATHOLOGICAL = "10^{10^{10}}"


def make_cases(n: int, seed: int) -> list[tuple[str, str, str]]:
    """``(kind, gold, response)`` triples; about one in five responses is wrong."""
    rng = random.Random(seed)
    cases = []
    for i in range(n):
        wrong = rng.random() < 0.2
        d = 1 if wrong else 0
        a, b = rng.randint(1, 40), rng.randint(2, 12)
        kind = ("int", "frac", "decimal", "sqrt", "pi", "poly", "set")[i % 7]
        if kind == "int":
            gold, resp = str(a * 37), str(a * 37 + d)
        elif kind == "frac":
            form = rng.choice(("{a}/{b}", "\\dfrac{{{a}}}{{{b}}}", "\\frac{{{a}}}{{{b}}}"))
            gold, resp = f"\\frac{{{a}}}{{{b}}}", form.format(a=a + d, b=b)
        elif kind == "decimal":
            q = rng.choice((2, 4, 5, 8, 10, 20, 25))
            gold, resp = f"{a / q:g}", f"\\frac{{{a + d}}}{{{q}}}"
        elif kind == "sqrt":
            m = rng.choice((2, 3, 5, 6, 7))
            gold, resp = f"{b}\\sqrt{{{m}}}", f"\\sqrt{{{b * b * m + d}}}"
        elif kind == "pi":
            gold, resp = f"\\frac{{\\pi}}{{{b}}}", f"\\pi/{b + d}"
        elif kind == "poly":
            gold, resp = f"x^2+{2 * a}x+{a * a}", f"(x+{a + d})^2"
        else:
            gold, resp = f"\\{{{a},{a + b}\\}}", f"\\{{{a + b + d},{a}\\}}"
        cases.append((kind, gold, resp))
    return cases


def completion(resp: str) -> list[dict[str, str]]:
    return [{"role": "assistant", "content": f"Working... so the answer is $\\boxed{{{resp}}}$."}]


def grade_inline(gold: str, resp: str, timeout_s: int) -> float:
    g = parse("\\boxed{" + gold + "}", parsing_timeout=timeout_s)
    t = parse("\\boxed{" + resp + "}", parsing_timeout=timeout_s)
    return float(verify(g, t, timeout_seconds=timeout_s))


@dataclass
class Run:
    mode: str
    n: int
    seconds: float
    grades_per_s: float
    correct: int
    timeouts: int = 0
    pathological_s: float | None = None  # one pathological grading, start to score
    next_grading_s: float | None = None  # the grading submitted right after that one
    startup_s: float | None = None
    cpu_ms_per_grade: float | None = None  # graders' CPU (workers, or this process inline)
    parent_cpu_ms_per_grade: float | None = None  # this process's CPU with a pool


def cpu_seconds(pid: int) -> float:
    """user + system CPU seconds of a process (from /proc: immune to other load)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_inline(cases, timeout_s: int, label: str) -> tuple[Run, list[float]]:
    scores, patho = [], None
    t0, c0 = time.perf_counter(), time.process_time()
    for _, gold, resp in cases:
        t = time.perf_counter()
        scores.append(grade_inline(gold, resp, timeout_s))
        if resp == PATHOLOGICAL:
            patho = time.perf_counter() - t
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    run = Run(label, len(cases), dt, len(cases) / dt, int(sum(scores)), 0, patho)
    run.cpu_ms_per_grade = 1000 * cpu / len(cases)
    return run, scores


async def run_pool(
    cases, size: int, timeout_s: int, label: str, hard_timeout: float | None = None
) -> tuple[Run, list[float]]:
    rubric = MathRubric(max_workers=size, timeout_seconds=timeout_s)
    if hard_timeout is not None:
        rubric.hard_timeout_seconds = hard_timeout
    t = time.perf_counter()
    await rubric.pool.start()
    startup = time.perf_counter() - t
    pids = rubric.pool.pids
    w0 = sum(cpu_seconds(p) for p in pids)
    t0, c0 = time.perf_counter(), time.process_time()
    scores = await asyncio.gather(*(rubric.correct_answer(completion(r), g) for _, g, r in cases))
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    run = Run(label, len(cases), dt, len(cases) / dt, int(sum(scores)), rubric.timeouts)
    run.startup_s = startup
    run.parent_cpu_ms_per_grade = 1000 * cpu / len(cases)
    if rubric.pool.pids == pids:  # no worker was replaced: their CPU is all accounted for
        run.cpu_ms_per_grade = 1000 * (sum(cpu_seconds(p) for p in pids) - w0) / len(cases)
    if any(r == PATHOLOGICAL for _, _, r in cases):
        # Inside the batch it also waits its turn in the queue: time one alone for its cost.
        t = time.perf_counter()
        assert await rubric.correct_answer(completion(PATHOLOGICAL), "7") == 0.0
        run.pathological_s = time.perf_counter() - t
        # Right after a kill: at size 1 this waits for the replacement worker (fork +
        # warm-up); at size 2 the other worker takes it at once.
        t = time.perf_counter()
        assert await rubric.correct_answer(completion("1"), "1") == 1.0
        run.next_grading_s = time.perf_counter() - t
    await rubric.teardown()
    return run, list(scores)


def _pool(size: int, timeout_s: int, kill_at: float | None):
    def go(batch, label):
        return asyncio.run(run_pool(batch, size, timeout_s, label, hard_timeout=kill_at))

    return go


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=2000)
    ap.add_argument("--sizes", default="1,2", help="pool sizes to time")
    ap.add_argument("--timeout", type=int, default=5, help="math-verify timeout (s)")
    ap.add_argument("--kill-at", type=float, default=2.0, help="hard timeout for the kill run")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=2, help="runs per configuration (best kept)")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    cases = make_cases(args.n, args.seed)
    mid = len(cases) // 2
    with_bad = [*cases[:mid], ("pathological", "7", PATHOLOGICAL), *cases[mid:]]
    T = args.timeout
    print(
        f"{len(cases)} answers, {len(os.sched_getaffinity(0))} CPUs, timeout {T} s, "
        f"load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )

    warm_up()  # the inline baseline gets the same warm start the pool workers get
    configs: list[tuple[str, list, Any]] = [
        ("inline", cases, lambda c, label: run_inline(c, T, label)),
        ("inline + pathological", with_bad, lambda c, label: run_inline(c, T, label)),
    ]
    for size in sizes:
        kill = f"pool size {size} + pathological, hard kill at {args.kill_at:g} s"
        configs += [
            (f"pool size {size}", cases, _pool(size, T, None)),
            (f"pool size {size} + pathological", with_bad, _pool(size, T, None)),
            (kill, with_bad, _pool(size, T, args.kill_at)),
        ]
    # The machine may be shared: run every configuration `rounds` times, interleaved, and
    # keep each one's fastest run (the one least slowed by other processes).
    best: dict[str, Run] = {}
    expected: dict[int, list[float]] = {}
    for rnd in range(args.rounds):
        for label, batch, fn in configs:
            run, scores = fn(batch, label)
            # Correctness: every run, inline or pooled, gives the same scores.
            assert expected.setdefault(len(batch), scores) == scores, f"{label}: scores differ"
            if label not in best or run.seconds < best[label].seconds:
                best[label] = run
            print(f"round {rnd + 1}: {label}: {run.seconds:.2f} s", flush=True)
    ref, ref_bad = expected[len(cases)], expected[len(with_bad)]
    assert ref_bad[:mid] + ref_bad[mid + 1 :] == ref and ref_bad[mid] == 0.0
    runs = [best[label] for label, _, _ in configs]
    base, bad = runs[0], runs[1]
    print("scores identical to inline in every run")

    print(
        "\n| run | answers | seconds | grades/s | vs inline | correct | timeouts | "
        "one pathological grading (s) | next grading (s) | grader CPU ms/grade | "
        "parent CPU ms/grade | pool start (s) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")

    def cell(x: float | None, fmt: str = ".2f") -> str:
        return "" if x is None else format(x, fmt)

    for r in runs:
        print(
            f"| {r.mode} | {r.n} | {r.seconds:.2f} | {r.grades_per_s:.0f} | "
            f"{r.grades_per_s / base.grades_per_s:.2f}x | {r.correct} | {r.timeouts} | "
            f"{cell(r.pathological_s)} | {cell(r.next_grading_s, '.3f')} | "
            f"{cell(r.cpu_ms_per_grade)} | "
            f"{cell(r.parent_cpu_ms_per_grade)} | {cell(r.startup_s)} |"
        )
    print("\nextra seconds from the pathological answer (vs the same run without it):")
    print(f"  inline: {bad.seconds - base.seconds:+.2f}")
    for i, size in enumerate(sizes):
        clean, soft, kill = runs[2 + 3 * i : 5 + 3 * i]
        print(
            f"  pool size {size}: {soft.seconds - clean.seconds:+.2f} (math-verify's {T} s "
            f"alarm), {kill.seconds - clean.seconds:+.2f} (killed at {args.kill_at:g} s)"
        )
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([asdict(r) for r in runs], f, indent=1)


if __name__ == "__main__":  # required: pool workers start from a forkserver/spawn context
    sys.exit(main())
