"""Grading cost of the boxed-answer reference environments (i3-math, i3-science).

For each environment: the start of its grading worker pool (math-verify's warm-up included)
and rollouts scored per second once warm, on a fixed mix of right, wrong and un-boxed answers
(6 of every 8 are right, so the script checks a mean reward of 0.750).

    uv run --no-sync python bench/grading/run.py [--env i3-math,i3-science] [--workers 2] [--rollouts 400]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import time

CHOICES = "Which?\nA. iron\nB. neon\nC. argon\nD. tin"

# (completion, gold answer, question): numeric, symbolic, set, interval, wrong and un-boxed.
MIXES = {
    "i3-math": [
        ("\\boxed{50}", "50", "q"),
        ("<think>...</think>\\boxed{\\frac{4}{36}}", "\\frac{1}{9}", "q"),
        ("\\boxed{\\sqrt{8}}", "2\\sqrt{2}", "q"),
        ("\\boxed{(2x-3)^2}", "4x^2 - 12x + 9", "q"),
        ("\\boxed{3, 2}", "2, 3", "q"),
        ("\\boxed{1024}", "1025", "q"),
        ("The answer is 30.", "30", "q"),
        ("\\boxed{(-\\infty, 4)}", "(-\\infty, 4)", "q"),
    ],
    # quantities with units, option letters, formulas, names; a wrong unit and an un-boxed letter
    "i3-science": [
        ("\\boxed{3.5 m/s^2}", "3.5\\ \\text{m/s}^2", ""),
        ("\\boxed{(B) neon}", "B", CHOICES),
        ("\\boxed{\\frac{q}{4\\pi\\epsilon_0 r^{2}}}", "\\frac{q}{4\\pi\\epsilon_0 r^2}", ""),
        ("\\boxed{NaCl}", "NaCl", ""),
        ("\\boxed{6.022\\times10^{23}}", "6.02\\times10^{23}", ""),
        ("\\boxed{5\\text{ m}}", "5\\text{ cm}", ""),
        ("The answer is B.", "B", CHOICES),
        ("\\boxed{\\sqrt{2E/m}}", "\\sqrt{\\frac{2E}{m}}", ""),
    ],
}


def state(env_id: str, text: str, answer: str, question: str) -> dict:
    prompt = [{"role": "user", "content": question}]
    return {
        "input": {},
        "prompt": prompt,
        "completion": [{"role": "assistant", "content": text}],
        "answer": answer,
        "info": {},
        "task": env_id,
        "example_id": 0,
        "metrics": {},
        "error": None,
    }


async def measure(env_id: str, workers: int, rollouts: int) -> None:
    module = importlib.import_module(env_id.replace("-", "_"))
    env = module.load_environment(source="sample", math_verify_workers=workers)
    t = time.perf_counter()
    await env.rubric.math.pool.start()
    start = time.perf_counter() - t
    mix = MIXES[env_id]
    states = [state(env_id, *mix[i % len(mix)]) for i in range(rollouts)]
    t = time.perf_counter()
    await asyncio.gather(*(env.rubric.score_rollout(s) for s in states))
    elapsed = time.perf_counter() - t
    mean = sum(s["reward"] for s in states) / len(states)
    await env.rubric.teardown()
    print(
        f"{env_id}: pool start ({workers} workers, warm-up included) {start:.2f} s; "
        f"{rollouts} rollouts scored in {elapsed:.2f} s = {rollouts / elapsed:.0f}/s, "
        f"mean reward {mean:.3f} (expected 0.750)"
    )
    if abs(mean - 0.75) > 1e-9:
        raise SystemExit(f"{env_id}: grading changed: mean reward {mean:.3f}, expected 0.750")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env", default="i3-math,i3-science", help="comma-separated environments")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--rollouts", type=int, default=400)
    a = p.parse_args()
    for env_id in a.env.split(","):
        if env_id not in MIXES:
            p.error(f"unknown environment {env_id!r}; choose from {', '.join(MIXES)}")
        asyncio.run(measure(env_id, a.workers, a.rollouts))


if __name__ == "__main__":
    main()
