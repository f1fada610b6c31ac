"""The reward and metrics of a rollout, all read from one grading record: the hidden tests run
at most once per rollout, shared by the reward and the metrics (scored concurrently)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import verifiers as vf
from verifiers import State


class HiddenTestGrades:
    """Grading records by sandbox id, and the rubric's functions that read them.

    `run_hidden_tests(state)` produces a submitted rollout's record (the environment's)."""

    def __init__(
        self, run_hidden_tests: Callable[[State], Coroutine[Any, Any, dict[str, Any]]]
    ) -> None:
        self._run_hidden_tests = run_hidden_tests
        self._jobs: dict[str, asyncio.Task[dict[str, Any]]] = {}

    def rubric(self) -> vf.Rubric:
        """Reward `solved` (weight 1) and the zero-weight metrics."""
        return vf.Rubric(
            funcs=[
                self.solved,
                self.did_submit,
                self.command_timeout_count,
                self.format_error_count,
                self.protected_files_changed,
                self.graded_tests_passing,
            ],
            weights=[1.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            parallelize_scoring=False,
        )

    async def grade(self, state: State) -> dict[str, Any]:
        """The grading record of this rollout (cached in state)."""
        if state.get("grading") is not None:
            return state["grading"]
        if not state.get("submitted"):
            state["grading"] = {
                "solved": False,
                "reason": f"not submitted (stopped by {state.get('stop_condition')})",
            }
            return state["grading"]
        key = state["sandbox_id"]
        job = self._jobs.get(key)
        if job is None:
            job = asyncio.get_running_loop().create_task(self._run_hidden_tests(state))
            self._jobs[key] = job
        return await asyncio.shield(job)

    def release(self, key: str) -> asyncio.Task[dict[str, Any]] | None:
        """Forget the sandbox `key`; its grading job, for the caller to cancel if running."""
        job = self._jobs.pop(key, None)
        return job if job is not None and not job.done() else None

    def release_all(self) -> list[asyncio.Task[dict[str, Any]]]:
        """Forget every sandbox; their grading jobs, for the caller to cancel."""
        jobs = list(self._jobs.values())
        self._jobs.clear()
        return jobs

    # -- the rubric's functions -----------------------------------------------------------
    async def solved(self, state: State) -> float:
        """1.0 when the agent submitted and the hidden tests all pass; else 0.0."""
        return 1.0 if (await self.grade(state))["solved"] else 0.0

    async def did_submit(self, state: State) -> float:
        return 1.0 if state.get("submitted") else 0.0

    async def command_timeout_count(self, state: State) -> float:
        return float(state.get("command_timeouts", 0))

    async def format_error_count(self, state: State) -> float:
        return float(state.get("format_errors", 0))

    async def protected_files_changed(self, state: State) -> float:
        grading = await self.grade(state)
        return float(len(grading.get("protected_changed") or ()))

    async def graded_tests_passing(self, state: State) -> float:
        """Fraction of graded tests that pass (0 when the tests did not run)."""
        statuses = (await self.grade(state)).get("statuses") or {}
        if not statuses:
            return 0.0
        return sum(s in ("PASSED", "XFAIL") for s in statuses.values()) / len(statuses)
