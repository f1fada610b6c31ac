"""SandboxEnv: a StatefulToolEnv with a `bash` tool running in a sandbox of its own per rollout.

Lifecycle of one rollout's sandbox:
* `setup_state` starts acquiring it (from a warm pool) while the first model call is in flight;
  the first tool call waits for it if it is not ready yet.
* Creation failures retry with exponential backoff and jitter; when they run out, or the sandbox
  dies mid-rollout, the rollout ends with a `SandboxError` (an infra error: a trainer masks it,
  `max_retries` re-runs it).
* Reward functions can still use it (`state["sandbox"]`): it is released in `after_scoring`.
  A rollout that errored or was cancelled releases it right away in its cleanup, and
  `generate` closing or `teardown` close whatever is left; no sandbox outlives its rollout.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from verifiers.decorators import cleanup
from verifiers.envs.stateful_tool_env import StatefulToolEnv
from verifiers.errors import SandboxError, ToolCallError
from verifiers.sandbox.base import (
    MiB,
    Provider,
    ProviderUnavailableError,
    RuntimeSpec,
    Sandbox,
    SandboxCreationError,
    SandboxSpec,
)
from verifiers.sandbox.pool import SandboxPool
from verifiers.state import State
from verifiers.types import Messages

logger = logging.getLogger("verifiers.sandbox")

GiB = 1024 * MiB


@dataclass
class _Lease:
    """One rollout's claim on a sandbox: the acquisition task, then the sandbox."""

    task: asyncio.Task[Sandbox] | None = None
    box: Sandbox | None = None
    released: bool = False
    created: float = field(default_factory=time.perf_counter)


def default_provider() -> Provider:
    """The strongest local provider that can run here (bwrap; else the weaker process tier)."""
    from verifiers.sandbox.bwrap import BwrapProvider

    reason = BwrapProvider.unavailable_reason()
    if reason is None:
        return BwrapProvider()
    from verifiers.sandbox.process import ProcessProvider

    fallback_reason = ProcessProvider.unavailable_reason()
    if fallback_reason is None:
        logger.warning(
            "sandbox: bwrap cannot run here (%s); falling back to the WEAKER 'process' tier "
            "(uid drop + cgroups + rlimits, no namespaces: host files readable by others and "
            "the host's process list are visible, network is not cut)",
            reason,
        )
        return ProcessProvider()
    return BwrapProvider()  # creating will raise ProviderUnavailableError with the reason


class SandboxEnv(StatefulToolEnv):
    """Classic constructor; `provider`, `spec`, `pool_size` and `runtime_packages` are ours.
    `docker_image`, `start_command`, `team_id`, `advanced_configs`, `labels`, `gpu_count` and
    the `sandbox_client_*` settings are accepted for compatibility; local providers ignore them
    (the image is recorded in the spec for remote providers)."""

    def __init__(
        self,
        sandbox_name: str = "sandbox-env",
        docker_image: str = "python:3.11-slim",
        start_command: str = "tail -f /dev/null",
        cpu_cores: float = 1,
        memory_gb: float = 2,
        disk_size_gb: float = 5,
        gpu_count: int = 0,
        timeout_minutes: float = 60,
        timeout_per_command_seconds: float = 30,
        environment_vars: dict[str, str] | None = None,
        team_id: str | None = None,
        advanced_configs: Any = None,
        labels: list[str] | None = None,
        max_retries: int = 5,
        base_delay: float = 0.5,
        backoff_factor: float = 2.0,
        max_backoff_seconds: float = 30.0,
        jitter: float = 1e-3,
        stop_errors: Sequence[type[Exception]] | None = None,
        sandbox_client_max_workers: int | None = None,
        sandbox_client_max_connections: int = 100,
        sandbox_client_max_keepalive_connections: int = 50,
        provider: Provider | None = None,
        spec: SandboxSpec | None = None,
        pool_size: int = 4,
        runtime_packages: Sequence[str] = (),
        pids_limit: int = 256,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            stop_errors=list(stop_errors) if stop_errors is not None else [SandboxError],
            **kwargs,
        )
        self.sandbox_name = sandbox_name
        self.docker_image = docker_image
        self.start_command = start_command
        self.labels = list(labels or [])
        self.timeout_per_command_seconds = timeout_per_command_seconds
        self.max_retries = max_retries
        self.base_delay = base_delay
        self.backoff_factor = backoff_factor
        self.max_backoff_seconds = max_backoff_seconds
        self.jitter = jitter
        self.spec = spec or SandboxSpec(
            runtime=RuntimeSpec(packages=tuple(runtime_packages)),
            image=docker_image,
            cpu=float(cpu_cores),
            memory=int(memory_gb * GiB),
            pids=pids_limit,
            disk=int(disk_size_gb * GiB),
            lifetime=timeout_minutes * 60 if timeout_minutes else None,
            env=dict(environment_vars or {}),
        )
        self._provider = provider
        self._owns_provider = provider is None
        self.pool_size = pool_size
        self._pool: SandboxPool | None = None
        self._leases: dict[str, _Lease] = {}
        self._generating = 0
        self.add_tool(self.bash, args_to_skip=["sandbox_id", "sandbox_state"])

    # -- provider and pool -----------------------------------------------------------------
    @property
    def provider(self) -> Provider:
        if self._provider is None:
            self._provider = default_provider()
        return self._provider

    @property
    def pool(self) -> SandboxPool:
        if self._pool is None:
            self._pool = SandboxPool(self.provider, self.spec, size=self.pool_size)
        return self._pool

    def get_sandbox_spec(self, state: State) -> SandboxSpec:
        """Override to vary the sandbox per rollout (a different spec bypasses the pool)."""
        return self.spec

    async def _create(self, spec: SandboxSpec) -> Sandbox:
        if spec == self.spec and self.pool_size > 0:
            return await self.pool.acquire()
        return await self.provider.create(spec)

    async def _acquire(self, lease: _Lease, spec: SandboxSpec) -> Sandbox:
        """Create with retries and backoff; the result is recorded on the lease at once so
        that a release racing with creation still closes it."""
        attempt = 0
        while True:
            try:
                box = await self._create(spec)
            except ProviderUnavailableError:
                raise  # retrying cannot help: the message says what is missing
            except SandboxError as e:
                if attempt >= self.max_retries:
                    raise SandboxCreationError(
                        f"could not create a sandbox after {attempt + 1} attempt(s): {e}"
                    ) from e
                delay = min(
                    self.max_backoff_seconds, self.base_delay * self.backoff_factor**attempt
                )
                delay += random.uniform(0, self.jitter)
                logger.warning("sandbox creation failed (%s); retrying in %.2fs", e, delay)
                attempt += 1
                await asyncio.sleep(delay)
                continue
            if lease.released:  # the rollout ended while we were creating
                await box.close()
                raise SandboxError("rollout ended before its sandbox was ready")
            lease.box = box
            return box

    # -- per-rollout lifecycle ------------------------------------------------------------
    async def setup_state(self, state: State, **kwargs: Any) -> State:
        state = await super().setup_state(state, **kwargs) or state
        key = uuid.uuid4().hex[:12]
        lease = _Lease()
        lease.task = asyncio.get_running_loop().create_task(
            self._acquire(lease, self.get_sandbox_spec(state))
        )
        # retrieve the exception if nobody awaits the task (rollout ended before a tool call)
        lease.task.add_done_callback(lambda t: t.cancelled() or t.exception())
        self._leases[key] = lease
        state["sandbox_id"] = key
        state["sandbox"] = None
        state["sandbox_state"] = {
            "ready": False,
            "ready_wait_time": 0.0,
            "command_execution_times": [],
        }
        return state

    async def get_sandbox(self, state: State) -> Sandbox:
        """This rollout's sandbox, waiting for it if it is still starting."""
        return await self._sandbox(state["sandbox_id"], state.get("sandbox_state"), state)

    async def _sandbox(
        self, key: str, sandbox_state: dict[str, Any] | None, state: State | None = None
    ) -> Sandbox:
        lease = self._leases.get(key)
        if lease is None or lease.released or lease.task is None:
            raise SandboxError(f"sandbox {key} has been released")
        t0 = time.perf_counter()
        box = await asyncio.shield(lease.task)
        if sandbox_state is not None and not sandbox_state["ready"]:
            sandbox_state["ready"] = True
            sandbox_state["ready_wait_time"] = time.perf_counter() - t0
            sandbox_state["provider_id"] = box.id
        if state is not None:
            state["sandbox"] = box
        return box

    def update_tool_args(
        self,
        tool_name: str,
        tool_args: dict[str, Any],
        messages: Messages,
        state: State,
        **kwargs: Any,
    ) -> dict[str, Any]:
        if tool_name == "bash":
            return {
                **tool_args,
                "sandbox_id": state["sandbox_id"],
                "sandbox_state": state["sandbox_state"],
            }
        return tool_args

    async def bash(
        self,
        command: str,
        sandbox_id: str,
        sandbox_state: dict[str, Any],
        working_dir: str | None = None,
    ) -> str:
        """Run a bash command in the sandbox and return its output.

        Args:
            command: The bash command to run.
            working_dir: Directory to run it in (default: the workspace).
        """
        box = await self._sandbox(sandbox_id, sandbox_state)
        t0 = time.perf_counter()
        result = await box.exec(command, timeout=self.timeout_per_command_seconds, cwd=working_dir)
        sandbox_state["command_execution_times"].append(time.perf_counter() - t0)
        if result.timed_out:
            return f"Error: Command timed out after {self.timeout_per_command_seconds:g}s"
        output = result.stdout
        if result.stderr:
            output = (
                f"{output}\nstderr:\n{result.stderr}" if output else f"stderr:\n{result.stderr}"
            )
        if result.truncated:
            output += "\n[output truncated]"
        return output or "(no output)"

    async def env_response(self, messages: Messages, state: State, **kwargs: Any) -> Messages:
        try:
            return await super().env_response(messages, state, **kwargs)
        except ToolCallError as e:
            # ToolEnv wraps stop errors; surface the SandboxError itself so the rollout's
            # error is recorded as an infra error (masked by trainers, retried by max_retries).
            if isinstance(e.__cause__, SandboxError):
                raise e.__cause__ from None
            raise

    async def post_rollout(self, state: State) -> None:
        """Classic hook, run before scoring while the sandbox is up (if it was started)."""

    @cleanup(priority=-100)
    async def release_failed_sandbox(self, state: State) -> None:
        """Run post_rollout; release now if the rollout errored or is being cancelled (its
        state may never reach scoring), otherwise keep it for the reward functions."""
        task = asyncio.current_task()
        cancelling = task is not None and task.cancelling() > 0
        lease = self._leases.get(state.get("sandbox_id") or "")
        if lease is not None and not cancelling and state.get("error") is None:
            if lease.task is not None and not lease.task.done():
                # no tool call needed it yet; reward functions may
                await asyncio.gather(lease.task, return_exceptions=True)
            if lease.box is not None:
                state["sandbox"] = lease.box
                await self.post_rollout(state)
        if cancelling or state.get("error") is not None:
            await self.release_sandbox(state)

    async def after_scoring(self, state: State) -> None:
        await super().after_scoring(state)
        await self.release_sandbox(state)

    async def release_sandbox(self, state: State) -> None:
        """Close this rollout's sandbox (idempotent)."""
        lease = self._leases.pop(state.get("sandbox_id") or "", None)
        state["sandbox"] = None
        if lease is not None:
            await asyncio.shield(self._release(lease))

    async def _release(self, lease: _Lease) -> None:
        lease.released = True
        if lease.task is not None and not lease.task.done():
            lease.task.cancel()
            await asyncio.gather(lease.task, return_exceptions=True)
        if lease.box is not None:
            try:
                await self.pool.release(lease.box)
            except Exception as e:
                logger.warning("closing sandbox %s failed: %s", lease.box.id, e)

    @property
    def active_sandboxes(self) -> int:
        """Rollout sandboxes acquired or being acquired and not yet released."""
        return len(self._leases)

    # -- environment-wide lifecycle ---------------------------------------------------------
    async def generate(self, *args: Any, **kwargs: Any) -> Any:
        self._generating += 1
        try:
            return await super().generate(*args, **kwargs)
        finally:
            self._generating -= 1
            if self._generating == 0:
                # the warm pool lives while generate calls run: its sandboxes are bound to
                # this event loop, and nothing should idle after the last call returns
                await asyncio.shield(self.close_sandboxes())

    async def close_sandboxes(self) -> None:
        """Release every rollout's sandbox and empty the warm pool."""
        leases = list(self._leases.values())
        self._leases.clear()
        await asyncio.gather(*(self._release(lease) for lease in leases), return_exceptions=True)
        if self._pool is not None:
            await self._pool.close()

    async def teardown(self) -> None:
        await self.close_sandboxes()
        if self._owns_provider and self._provider is not None:
            await self._provider.close()
        await super().teardown()

    # -- metrics ----------------------------------------------------------------------------
    def metric_names(self) -> list[str]:
        return [
            *super().metric_names(),
            "sandbox_ready_wait_time",
            "sandbox_command_execution_time",
        ]

    def state_to_output(self, state: State, state_columns: list[str] | None = None):
        out = super().state_to_output(state, state_columns)
        ss = state.get("sandbox_state") or {}
        times = ss.get("command_execution_times") or []
        extra = {
            "sandbox_ready_wait_time": float(ss.get("ready_wait_time", 0.0)),
            "sandbox_command_execution_time": sum(times) / len(times) if times else 0.0,
        }
        out["metrics"] = {**out["metrics"], **extra}
        return out
