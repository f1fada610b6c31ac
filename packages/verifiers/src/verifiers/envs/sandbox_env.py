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

The classic surface works on the local sandboxes: `env.sandbox_client` (upstream's
AsyncSandboxClient calls, see `sandbox_client.py`), `env.sandbox_request`, `destroy_sandbox`,
`post_rollout`, the `sandbox_id`/`sandbox_state` state keys and `SandboxState`/`AdvancedConfigs`
importable from here.

The jobs are split: `sandbox_settings` (what the constructor keywords mean, `SandboxSettings`),
`sandbox_leases` (the sandboxes by id, the provider and the warm pool, `SandboxLeases`),
`sandbox_post_rollout` (the classic hook, once per rollout) and `sandbox_commands` (the `bash`
tool's plumbing). This class wires them into the rollout.

Where `docker_image` runs (docs/sandboxes.md, "Classic environments with container images"):
* on the image tier (the image pulled, its root an overlay writable everywhere, capped by
  `disk_size_gb`; the start command's preparation and `runtime_packages` run before the sandbox
  is ready) when a registry is configured for it (`sandbox_images.image_source`:
  `VF_REGISTRY_MIRROR` for Docker Hub names, or a registry named in the image), or when the
  provider runs images;
* otherwise as before: Python images on the local Python runtime (writable: the workspace and
  /tmp; the start command is not run), any other image refused at load
  (`ignore_docker_image=True` runs it on that runtime anyway).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from verifiers.decorators import cleanup
from verifiers.envs.forwarding import forward_attribute
from verifiers.envs.sandbox_client import (
    AdvancedConfigs,
    CreateSandboxRequest,
    LocalSandboxClient,
)
from verifiers.envs.sandbox_commands import SandboxState, run_bash
from verifiers.envs.sandbox_images import StartCommandError
from verifiers.envs.sandbox_leases import Lease, SandboxLeases
from verifiers.envs.sandbox_post_rollout import PostRollout
from verifiers.envs.sandbox_providers import (
    PROVIDER_VAR,
    configured_provider,
    default_provider,
    make_provider,
    resolve_provider,
)
from verifiers.envs.sandbox_settings import SandboxSettings, Setting, wants_images
from verifiers.envs.stateful_tool_env import StatefulToolEnv
from verifiers.errors import SandboxError, ToolCallError
from verifiers.sandbox.base import Provider, Sandbox, SandboxCreationError, SandboxSpec
from verifiers.sandbox.pool import InUse, SandboxPool
from verifiers.state import State
from verifiers.types import Messages, RolloutOutput

__all__ = [
    "PROVIDER_VAR",
    "AdvancedConfigs",
    "CreateSandboxRequest",
    "SandboxCreationError",
    "SandboxEnv",
    "SandboxNotReadyError",
    "SandboxState",
    "StartCommandError",
    "configured_provider",
    "default_provider",
    "make_provider",
    "resolve_provider",
]

_Lease = Lease  # the name before the leases moved out (mini-swe-agent-plus reads `.task`)


class SandboxNotReadyError(SandboxError):
    """The sandbox did not come up (upstream raises it from the first tool call)."""


class SandboxEnv(StatefulToolEnv):
    """Classic constructor; `provider`, `spec`, `pool_size`, `runtime_packages`, `pids_limit`,
    `network`, `start_command_timeout` and `ignore_docker_image` are ours. `cpu_cores`,
    `memory_gb`, `disk_size_gb`, `timeout_minutes` and `environment_vars` become the sandbox's
    limits, lifetime and environment. `docker_image` runs on the image tier when a registry is
    configured for it (see the module docstring), with its start command; otherwise it must be
    a Python image (the local runtime stands in for it) unless `ignore_docker_image=True`.
    `gpu_count` must be 0. `team_id`, `labels`, `advanced_configs` and the `sandbox_client_*`
    settings are kept on `sandbox_request` and have no local effect. `network=True` lets the
    sandbox use the host's network (`pip install` needs it)."""

    # the classic attributes, kept on `sandbox_settings` (assigning them on the env works)
    sandbox_request: Setting[CreateSandboxRequest] = Setting("request")
    spec: Setting[SandboxSpec] = Setting()
    runs_images: Setting[bool] = Setting()  # `docker_image` runs as an image, not stood in for
    install_packages: Setting[tuple[str, ...]] = Setting()
    ignore_docker_image: Setting[bool] = Setting()
    timeout_per_command_seconds: Setting[float] = Setting()
    start_command_timeout: Setting[float] = Setting()
    pool_size: Setting[int] = Setting()
    max_retries: Setting[int] = Setting(on_retry=True)
    base_delay: Setting[float] = Setting(on_retry=True)
    backoff_factor: Setting[float] = Setting(on_retry=True)
    max_backoff_seconds: Setting[float] = Setting(on_retry=True)
    jitter: Setting[float] = Setting(on_retry=True)
    # the sandbox provider and the warm pool, held by the leases
    provider = forward_attribute[Provider]("sandbox_leases")
    pool = forward_attribute[SandboxPool]("sandbox_leases")

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
        provider: Provider | str | None = None,
        spec: SandboxSpec | None = None,
        pool_size: int = 4,
        runtime_packages: Sequence[str] = (),
        pids_limit: int = 256,
        ignore_docker_image: bool = False,
        network: bool = False,
        start_command_timeout: float = 600,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            stop_errors=list(stop_errors) if stop_errors is not None else [SandboxError],
            **kwargs,
        )
        # no provider given: the image tier (or the configured tier's image variant) when a
        # registry is configured for the image
        resolved = resolve_provider(
            provider, images=wants_images(provider, docker_image, ignore_docker_image)
        )
        if isinstance(advanced_configs, dict):
            advanced_configs = AdvancedConfigs(**advanced_configs)
        classic_request = CreateSandboxRequest(
            name=sandbox_name,
            docker_image=docker_image,
            start_command=start_command,
            cpu_cores=cpu_cores,
            memory_gb=memory_gb,
            disk_size_gb=disk_size_gb,
            gpu_count=gpu_count,
            timeout_minutes=timeout_minutes,
            environment_vars=environment_vars,
            team_id=team_id,
            advanced_configs=advanced_configs,
            labels=list(labels or []),
        )
        self.sandbox_settings = SandboxSettings.from_classic(
            resolved,
            classic_request,
            spec=spec,
            runtime_packages=runtime_packages,
            pids_limit=pids_limit,
            network=network,
            ignore_docker_image=ignore_docker_image,
            timeout_per_command_seconds=timeout_per_command_seconds,
            start_command_timeout=start_command_timeout,
            pool_size=pool_size,
            max_retries=max_retries,
            base_delay=base_delay,
            backoff_factor=backoff_factor,
            max_backoff_seconds=max_backoff_seconds,
            jitter=jitter,
        )
        self.sandbox_name = sandbox_name
        self.docker_image = docker_image
        self.start_command = start_command
        self.labels = list(labels or [])
        self.sandbox_leases = SandboxLeases(
            self.sandbox_settings,
            resolved,
            owns_provider=not isinstance(provider, Provider),
            forget=lambda sandbox_id: self.sandbox_client.forget(sandbox_id),
        )
        self._leases = self.sandbox_leases.by_id  # the classic attribute, the same dict
        self._post_rollout = PostRollout(self.post_rollout, self.sandbox_leases)
        self._in_use = InUse(self.close_sandboxes)  # the warm pool lives while generate runs
        self.sandbox_client = LocalSandboxClient(self.sandbox_leases)
        # upstream 0.1.9+: the directory comes from the state, never from the model
        self.add_tool(self.bash, args_from_state=["sandbox_id", "sandbox_state", "working_dir"])

    def get_sandbox_request(self, state: State) -> CreateSandboxRequest:
        """The classic per-rollout hook: override to vary the request per state."""
        return self.sandbox_request.model_copy()

    def get_sandbox_spec(self, state: State) -> SandboxSpec:
        """Override to vary the sandbox per rollout (a different spec bypasses the pool)."""
        return self.sandbox_settings.spec_for_request(self.get_sandbox_request(state))

    # -- per-rollout lifecycle ------------------------------------------------------------
    async def setup_state(self, state: State, **kwargs: Any) -> State:
        state = await super().setup_state(state, **kwargs) or state
        request = self.get_sandbox_request(state)
        key = self.sandbox_leases.open(self.get_sandbox_spec(state), request)
        self.sandbox_client.remember(key, request)
        state["sandbox_id"] = key
        state["sandbox"] = None
        state["sandbox_state"] = SandboxState(
            ready=False, ready_wait_time=0.0, command_execution_times=[]
        )
        return state

    async def _wait_for_sandbox_ready(self, sandbox_state: SandboxState, sandbox_id: str) -> None:
        """Classic helper (upstream 0.1.9+): wait for the sandbox, recording the wait."""
        try:
            await self.sandbox_leases.wait(sandbox_id, sandbox_state)
        except SandboxError as e:
            raise SandboxNotReadyError(str(e)) from e

    async def get_sandbox(self, state: State) -> Sandbox:
        """This rollout's sandbox, waiting for it if it is still starting."""
        return await self.sandbox_leases.wait(
            state["sandbox_id"], state.get("sandbox_state"), state
        )

    async def bash(
        self,
        command: str,
        sandbox_id: str,
        sandbox_state: SandboxState | None = None,
        working_dir: str | None = None,
    ) -> str:
        """Execute `command` inside persistent sandbox container."""
        # (the model sees that docstring as the tool's description: upstream's, word for word)
        box = await self.sandbox_leases.wait(sandbox_id, sandbox_state)
        return await run_bash(
            box, command, working_dir, self.timeout_per_command_seconds, sandbox_state
        )

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
        """Classic hook, run once before scoring while the sandbox is up (if it was started).
        The 0.1.6-0.1.7 form `post_rollout(self, messages, state, **kwargs)` is called so."""

    async def destroy_sandbox(self, state: State | str | None) -> None:
        """Classic: run `post_rollout` (once per rollout) and close the rollout's sandbox now,
        before scoring. Given a sandbox id (the 0.1.6-0.1.7 form, and ids from
        `sandbox_client.create`), close that sandbox only."""
        if state is None:
            return
        if isinstance(state, str):
            await self.sandbox_leases.close(state)
            return
        await self._post_rollout.run_once(state)
        await self.release_sandbox(state)

    @cleanup(priority=-100)
    async def release_failed_sandbox(self, state: State) -> None:
        """Run post_rollout; release now if the rollout errored or is being cancelled (its
        state may never reach scoring), otherwise keep it for the reward functions."""
        task = asyncio.current_task()
        cancelling = task is not None and task.cancelling() > 0
        if not cancelling and state.get("error") is None:
            try:
                await self._post_rollout.run_once(state)
            except BaseException:
                await self.release_sandbox(state)  # the rollout has failed: nothing to keep
                raise
        if cancelling or state.get("error") is not None:
            await self.release_sandbox(state)

    async def after_scoring(self, state: State) -> None:
        await super().after_scoring(state)
        self._post_rollout.forget(state)
        await self.release_sandbox(state)

    async def release_sandbox(self, state: State) -> None:
        """Close this rollout's sandbox (idempotent)."""
        if "sandbox" in state:
            state["sandbox"] = None
        await self.sandbox_leases.close(state.get("sandbox_id") or "")

    @property
    def active_sandboxes(self) -> set[str]:
        """Ids of the sandboxes acquired or being acquired and not yet released (a copy:
        classic code that adds to or discards from it changes nothing)."""
        return set(self.sandbox_leases.by_id)

    @active_sandboxes.setter
    def active_sandboxes(self, value: set[str]) -> None:
        """Classic subclasses assign `self.active_sandboxes = set()` in their constructor; the
        leases stay the record of what is open, so the assignment changes nothing."""

    async def bulk_delete_sandboxes(self, global_ids: list[str]) -> None:
        """Classic: close these sandboxes (ids unknown here are skipped)."""
        await asyncio.gather(*(self.sandbox_leases.close(i) for i in global_ids))

    # -- environment-wide lifecycle ---------------------------------------------------------
    async def generate(self, *args: Any, **kwargs: Any) -> Any:
        return await self._in_use.run(super().generate(*args, **kwargs))

    async def close_sandboxes(self) -> None:
        """Release every rollout's sandbox and empty the warm pool."""
        self._post_rollout.clear()
        await self.sandbox_leases.close_all()

    async def teardown_sandboxes(self) -> None:
        """Classic name for closing every sandbox left (run by `teardown`)."""
        await self.close_sandboxes()

    async def teardown(self) -> None:
        await self.close_sandboxes()
        await self.sandbox_client.aclose()
        await self.sandbox_leases.close_provider()
        await super().teardown()

    # -- metrics ----------------------------------------------------------------------------
    def metric_names(self) -> list[str]:
        return [
            *super().metric_names(),
            "sandbox_ready_wait_time",
            "sandbox_command_execution_time",
        ]

    def state_to_output(
        self, state: State, state_columns: list[str] | None = None
    ) -> RolloutOutput:
        out = super().state_to_output(state, state_columns)
        ss = state.get("sandbox_state") or {}
        times = ss.get("command_execution_times") or []
        extra = {
            "sandbox_ready_wait_time": float(ss.get("ready_wait_time", 0.0)),
            "sandbox_command_execution_time": sum(times) / len(times) if times else 0.0,
        }
        out["metrics"] = {**out["metrics"], **extra}
        return out
