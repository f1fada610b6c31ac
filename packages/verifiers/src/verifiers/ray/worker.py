"""The environment worker: a Ray actor that loads one environment once and runs many rollout
groups at once on its own event loop (`RayEnvironment` sends it the groups)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from verifiers.client import Client
from verifiers.types import RolloutOutput, SamplingArgs


@dataclass(frozen=True)
class EnvSpec:
    """How to build the environment, the same way in the orchestrator and on every actor:
    `load_environment(env_id, **env_args)`, or `factory()` (a picklable callable)."""

    env_id: str | None = None
    env_args: dict[str, Any] = field(default_factory=dict)
    factory: Callable[[], Any] | None = None

    def build(self) -> Any:
        from verifiers.envs.environment import Environment
        from verifiers.errors import ConfigError, EnvironmentLoadError

        if self.factory is not None:
            env = self.factory()
            if not isinstance(env, Environment):
                raise EnvironmentLoadError(
                    f"the factory {self.factory!r} returned {type(env).__name__}, "
                    "not a vf.Environment"
                )
            return env
        if not self.env_id:
            raise ConfigError("RayEnvironment needs an environment id or a factory")
        from verifiers.loading import load_environment

        return load_environment(self.env_id, **self.env_args)


@dataclass(frozen=True)
class GroupCall:
    """One group as `RayEnvironment` sends it to a worker: `run_scored_group`'s arguments, and
    `rollout_limit`, how many of its rollouts run at a time on the actor (0: all)."""

    rows: list[dict[str, Any]]
    client: Client
    model: str
    sampling: SamplingArgs
    group_scoring: bool
    rollout_limit: int
    max_retries: int
    state_columns: list[str] | None


class EnvWorker:
    """One environment on one actor. `run_group` is `Environment.run_scored_group` with the
    client the group came with (one instance per client for all groups, so one connection
    pool) and `rollout_limit` rollouts of the group at a time (0: all)."""

    def __init__(self, spec: EnvSpec) -> None:
        self.env = spec.build()
        self.env.executor  # noqa: B018 - worker threads for sync user code, created once
        self._clients: dict[str, Client] = {}
        self._stats = {"running": 0, "peak_running": 0, "finished": 0, "cancelled": 0}

    def info(self) -> dict[str, Any]:
        """Where this worker runs (answered once loading has finished)."""
        import ray

        return {"node_id": ray.get_runtime_context().get_node_id(), "pid": os.getpid()}

    def stats(self) -> dict[str, int]:
        """Groups running now and since start (`cancelled`: stopped by the orchestrator)."""
        return dict(self._stats)

    async def run_group(self, call: GroupCall) -> list[RolloutOutput]:
        rows = call.rows
        client = call.client.rebind(self._clients)
        limit = call.rollout_limit
        slots = asyncio.Semaphore(limit) if 0 < limit < len(rows) else None
        stats = self._stats
        stats["running"] += 1
        stats["peak_running"] = max(stats["peak_running"], stats["running"])
        try:
            outputs = await self.env.run_scored_group(
                rows,
                client,
                call.model,
                call.sampling,
                group_scoring=call.group_scoring,
                rollout_slots=slots,
                max_retries=call.max_retries,
                state_columns=call.state_columns,
            )
        except asyncio.CancelledError:  # `ray.cancel` from the orchestrator
            stats["cancelled"] += 1
            raise
        finally:
            stats["running"] -= 1
        stats["finished"] += 1
        return outputs

    async def aclose(self) -> None:
        """Release the clients' connections and the environment (its teardown handlers)."""
        for client in self._clients.values():
            await client.aclose()
        self._clients.clear()
        await self.env.teardown()
