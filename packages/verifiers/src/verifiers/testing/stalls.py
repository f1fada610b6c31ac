"""`assert_stuck_grading_does_not_stall`: a grading that never finishes (math-verify on an
answer such as ``10^{10^{10}}``) is cut at its timeout and scores 0, and holds no other rollout
up meanwhile; the check every math-verify environment's suite makes, written once."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

__all__ = ["assert_stuck_grading_does_not_stall"]


async def assert_stuck_grading_does_not_stall(
    score: Callable[..., Awaitable[dict[str, Any]]],
    stuck: Sequence[Any],
    others: Sequence[Sequence[Any]],
) -> float:
    """Start ``score(*stuck)`` (a rollout whose grading never finishes), then ``score(*args)``
    for each of ``others`` (right answers) while it runs: each of them scores 1.0 and finishes
    first; the stuck one scores 0.0 without an error, marked ``math_verify_timeout``. Returns
    the seconds the stuck one took (for a bound on the hard kill)."""
    finished: dict[int, float] = {}
    start = time.perf_counter()

    async def timed(i: int, args: Sequence[Any]) -> dict[str, Any]:
        state = await score(*args)
        finished[i] = time.perf_counter() - start
        return state

    slow = asyncio.ensure_future(timed(-1, stuck))
    await asyncio.sleep(0)  # the stuck grading takes a worker first
    states = await asyncio.gather(*(timed(i, args) for i, args in enumerate(others)))
    bad = await slow
    assert [s["reward"] for s in states] == [1.0] * len(others)
    assert bad["reward"] == 0.0 and bad["error"] is None and bad["math_verify_timeout"] is True
    assert max(finished[i] for i in range(len(others))) < finished[-1]
    return finished[-1]
