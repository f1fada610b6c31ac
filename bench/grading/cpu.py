"""CPU time one grading worker spends per rollout on `run.py`'s answer mix, in-process (no
pool, no event loop): the part of grading time the exact layer can change, measured without
the pool's IPC and the machine's load swamping it.

    uv run --no-sync python bench/grading/cpu.py [--repeats 5] [--rounds 40]

Before/after a change, point PYTHONPATH at an export of the older tree (the script only uses
names both have: ``grade_math_answer``, ``strict_boxed_answer``, ``check_answer``):

    git archive <commit> packages/verifiers/src environments/i3-math/i3_math \\
        environments/i3-science/i3_science | tar -x -C /tmp/before
    PYTHONPATH=/tmp/before/packages/verifiers/src:/tmp/before/environments/i3-math:\\
    /tmp/before/environments/i3-science uv run --no-sync python bench/grading/cpu.py
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from run import MIXES


def graders() -> dict[str, Any]:
    from i3_science import check_answer

    from verifiers.rubrics.math_rubric import grade_math_answer, strict_boxed_answer, warm_up

    warm_up()

    def answer(text: str) -> str:
        return strict_boxed_answer(text.rsplit("</think>", 1)[-1])

    return {
        "i3-math": lambda text, gold, q: answer(text) and grade_math_answer(gold, answer(text), 5),
        "i3-science": lambda text, gold, q: (
            answer(text) and check_answer(gold, answer(text), q, 5, 0.01)
        ),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=5, help="best of this many measurements")
    p.add_argument("--rounds", type=int, default=40, help="passes over the mix per measurement")
    a = p.parse_args()
    import verifiers

    print(f"verifiers from {Path(verifiers.__file__).parents[1]}")
    for env_id, grade in graders().items():
        mix = MIXES[env_id]
        for row in mix:
            grade(*row)  # first use of each path
        best = float("inf")
        for _ in range(a.repeats):
            t = time.process_time()
            for _ in range(a.rounds):
                for row in mix:
                    grade(*row)
            best = min(best, (time.process_time() - t) / (a.rounds * len(mix)))
        print(f"{env_id}: {best * 1000:.3f} ms CPU per rollout (best of {a.repeats})")


if __name__ == "__main__":
    main()
