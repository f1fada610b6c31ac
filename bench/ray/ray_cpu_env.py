"""The Ray benchmark's environment: `arithmetic` plus a fixed amount of pure-Python CPU per
rollout in its rubric.

`cpu_burn` (a weight-0 metric, so the reward stays arithmetic's exact match) runs `work`
iterations of an integer recurrence: deterministic, the same for every rollout, and holding
the GIL the way a parser- or simulation-heavy reward function does. In one process the
scoring of all rollouts therefore shares one core; on a cluster each node's environment
worker runs its own share. `work=0` is plain arithmetic (the light case).

Loaded by name (`load_environment("ray_cpu_env", work=...)`) with bench/ray on PYTHONPATH,
in the orchestrator and, the same way, in every worker actor.
"""

from __future__ import annotations

from typing import Any


def burn(work: int) -> int:
    acc = 0
    for i in range(work):
        acc = (acc * 31 + i) % 1_000_003
    return acc


def load_environment(num_examples: int = 64, work: int = 0, seed: int = 0) -> Any:
    from verifiers.examples import arithmetic

    env = arithmetic.load_environment(num_examples=num_examples, seed=seed)

    def cpu_burn(completion: Any, answer: str, **_: Any) -> float:
        return float(burn(work) % 2)

    env.rubric.add_metric(cpu_burn)
    return env
