"""Grading cost of i3-science: worker-pool start (with math-verify's warm-up) and rollouts scored
per second once warm, for a mix of quantities, option letters, text, formulas, wrong and un-boxed answers.

    uv run python environments/i3-science/scripts/measure.py [--workers 2] [--rollouts 400]
"""

from __future__ import annotations

import argparse
import asyncio
import time

from i3_science import load_environment

CHOICES = "Which?\nA. iron\nB. neon\nC. argon\nD. tin"
MIX = [
    ("\\boxed{3.5 m/s^2}", "3.5\\ \\text{m/s}^2", ""),
    ("\\boxed{(B) neon}", "B", CHOICES),
    ("\\boxed{\\frac{q}{4\\pi\\epsilon_0 r^{2}}}", "\\frac{q}{4\\pi\\epsilon_0 r^2}", ""),
    ("\\boxed{NaCl}", "NaCl", ""),
    ("\\boxed{6.022\\times10^{23}}", "6.02\\times10^{23}", ""),
    ("\\boxed{5\\text{ m}}", "5\\text{ cm}", ""),
    ("The answer is B.", "B", CHOICES),
    ("\\boxed{\\sqrt{2E/m}}", "\\sqrt{\\frac{2E}{m}}", ""),
]


def state(text: str, answer: str, question: str) -> dict:
    prompt = [{"role": "user", "content": question}]
    return {
        "input": {},
        "prompt": prompt,
        "completion": [{"role": "assistant", "content": text}],
        "answer": answer,
        "info": {},
        "task": "i3-science",
        "example_id": 0,
        "metrics": {},
        "error": None,
    }


async def main(workers: int, rollouts: int) -> None:
    env = load_environment(source="sample", math_verify_workers=workers)
    t = time.perf_counter()
    await env.rubric.math.pool.start()
    print(f"pool start ({workers} workers, warm-up included): {time.perf_counter() - t:.2f} s")
    states = [state(*MIX[i % len(MIX)]) for i in range(rollouts)]
    t = time.perf_counter()
    await asyncio.gather(*(env.rubric.score_rollout(s) for s in states))
    elapsed = time.perf_counter() - t
    mean = sum(s["reward"] for s in states) / len(states)
    print(
        f"{rollouts} rollouts scored in {elapsed:.2f} s: {rollouts / elapsed:.0f}/s, "
        f"mean reward {mean:.3f} (expected 0.750)"
    )
    await env.rubric.teardown()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--rollouts", type=int, default=400)
    a = p.parse_args()
    asyncio.run(main(a.workers, a.rollouts))
