"""Grading cost of i3-math: worker-pool start (with math-verify's warm-up) and rollouts scored
per second once warm, for a mix of numeric, symbolic, wrong and un-boxed answers.

    uv run python environments/i3-math/scripts/measure.py [--workers 2] [--rollouts 400]
"""

from __future__ import annotations

import argparse
import asyncio
import time

from i3_math import load_environment

MIX = [
    ("\\boxed{50}", "50"),
    ("<think>...</think>\\boxed{\\frac{4}{36}}", "\\frac{1}{9}"),
    ("\\boxed{\\sqrt{8}}", "2\\sqrt{2}"),
    ("\\boxed{(2x-3)^2}", "4x^2 - 12x + 9"),
    ("\\boxed{3, 2}", "2, 3"),
    ("\\boxed{1024}", "1025"),
    ("The answer is 30.", "30"),
    ("\\boxed{(-\\infty, 4)}", "(-\\infty, 4)"),
]


def state(text: str, answer: str) -> dict:
    prompt = [{"role": "user", "content": "q"}]
    return {
        "input": {},
        "prompt": prompt,
        "completion": [{"role": "assistant", "content": text}],
        "answer": answer,
        "info": {},
        "task": "i3-math",
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
