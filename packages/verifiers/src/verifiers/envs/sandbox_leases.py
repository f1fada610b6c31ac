"""A SandboxEnv's sandboxes by id: one lease per sandbox (a rollout's, or one the classic
`sandbox_client.create` made), its creation with retries from the provider or the warm pool,
its start steps, and its release. The env's provider and pool live here too; the leases also
serve `LocalSandboxClient` (they implement its `SandboxHost`)."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from verifiers.envs.sandbox_client import CreateSandboxRequest
from verifiers.envs.sandbox_images import run_start
from verifiers.envs.sandbox_providers import default_provider
from verifiers.envs.sandbox_settings import SandboxSettings, StartStep
from verifiers.errors import SandboxError
from verifiers.sandbox.base import (
    Provider,
    ProviderUnavailableError,
    Sandbox,
    SandboxCreationError,
    SandboxSpec,
)
from verifiers.sandbox.pool import SandboxPool
from verifiers.state import State

logger = logging.getLogger("verifiers.sandbox")


@dataclass
class Lease:
    """One claim on a sandbox: the acquisition task, then the sandbox."""

    task: asyncio.Task[Sandbox] | None = None
    box: Sandbox | None = None
    released: bool = False
    created: float = field(default_factory=time.perf_counter)


class SandboxLeases:
    """The open leases of one environment, keyed by sandbox id. `forget(id)` is called for
    every id that closes (the classic client drops what it recorded about it)."""

    def __init__(
        self,
        settings: SandboxSettings,
        provider: Provider | None,
        owns_provider: bool,
        forget: Callable[[str], None] = lambda sandbox_id: None,
    ) -> None:
        self.settings = settings
        self._provider = provider  # None: the local default, made when first needed
        self._owns_provider = owns_provider
        self._pool: SandboxPool | None = None
        self.forget = forget
        self.by_id: dict[str, Lease] = {}

    # -- provider and pool -----------------------------------------------------------------
    @property
    def provider(self) -> Provider:
        if self._provider is None:
            self._provider = default_provider(images=self.settings.runs_images)
        return self._provider

    @property
    def pool(self) -> SandboxPool:
        if self._pool is None:
            self._pool = SandboxPool(
                self.provider, self.settings.spec, size=self.settings.pool_size
            )
        return self._pool

    # -- opening -----------------------------------------------------------------------------
    def open(self, spec: SandboxSpec, request: CreateSandboxRequest | None = None) -> str:
        """Start acquiring a sandbox for `spec` (refused at once when `request` cannot run
        here); returns its id."""
        key = uuid.uuid4().hex[:12]
        lease = Lease()
        refusal = self.settings.unsupported_reason(request) if request is not None else None
        if refusal:
            work = _refuse(refusal)
        else:
            steps = self.settings.start_steps(request) if request is not None else []
            work = self._acquire(lease, spec, steps)
        lease.task = asyncio.get_running_loop().create_task(work)
        # retrieve the exception if nobody awaits the task (rollout ended before a tool call)
        lease.task.add_done_callback(lambda t: t.cancelled() or t.exception())
        self.by_id[key] = lease
        return key

    async def _create(self, spec: SandboxSpec) -> Sandbox:
        if spec == self.settings.spec and self.settings.pool_size > 0:
            return await self.pool.acquire()
        return await self.provider.create(spec)

    async def _create_with_retries(self, spec: SandboxSpec) -> Sandbox:
        retry = self.settings.retry
        attempt = 0
        while True:
            try:
                return await self._create(spec)
            except ProviderUnavailableError:
                raise  # retrying cannot help: the message says what is missing
            except SandboxError as e:
                if attempt >= retry.max_retries:
                    raise SandboxCreationError(
                        f"could not create a sandbox after {attempt + 1} attempt(s): {e}"
                    ) from e
                delay = retry.delay(attempt)
                logger.warning("sandbox creation failed (%s); retrying in %.2fs", e, delay)
                attempt += 1
                await asyncio.sleep(delay)

    async def _acquire(
        self, lease: Lease, spec: SandboxSpec, steps: Sequence[StartStep]
    ) -> Sandbox:
        """Create with retries and backoff, then run the start `steps`; the result is
        recorded on the lease at once so that a release racing with creation still closes it.
        A failing start step closes the sandbox and is not retried (it would fail again)."""
        box = await self._create_with_retries(spec)
        if lease.released:  # the rollout ended while we were creating
            await box.close()
            raise SandboxError("rollout ended before its sandbox was ready")
        lease.box = box
        try:
            for what, command in steps:
                await run_start(box, command, self.settings.start_command_timeout, what)
        except BaseException:
            lease.box = None
            await asyncio.shield(self.pool.release(box))
            raise
        return box

    # -- using -------------------------------------------------------------------------------
    async def wait(
        self, key: str, sandbox_state: Any = None, state: State | None = None
    ) -> Sandbox:
        """The sandbox of `key`, waiting for it if it is still starting; the first wait is
        recorded in `sandbox_state` (ready, ready_wait_time), the sandbox in `state`."""
        lease = self.by_id.get(key)
        if lease is None or lease.released or lease.task is None:
            raise SandboxError(f"sandbox {key} has been released")
        t0 = time.perf_counter()
        box = await asyncio.shield(lease.task)
        if sandbox_state is not None and not sandbox_state.get("ready"):
            sandbox_state["ready"] = True
            sandbox_state["ready_wait_time"] = time.perf_counter() - t0
        if state is not None:
            state["sandbox"] = box
        return box

    async def settled(self, key: str) -> Sandbox | None:
        """The sandbox of `key` once its creation has ended (None if it failed or is gone)."""
        lease = self.by_id.get(key)
        if lease is None:
            return None
        if lease.task is not None and not lease.task.done():
            await asyncio.gather(lease.task, return_exceptions=True)
        return lease.box

    # -- closing -----------------------------------------------------------------------------
    async def close(self, key: str) -> bool:
        """Close the sandbox of `key` (False: no such lease; idempotent)."""
        lease = self.by_id.pop(key, None)
        self.forget(key)
        if lease is None:
            return False
        await asyncio.shield(self._release(lease))
        return True

    async def _release(self, lease: Lease) -> None:
        lease.released = True
        if lease.task is not None and not lease.task.done():
            lease.task.cancel()
            await asyncio.gather(lease.task, return_exceptions=True)
        if lease.box is not None:
            try:
                await self.pool.release(lease.box)
            except Exception as e:
                logger.warning("closing sandbox %s failed: %s", lease.box.id, e)

    async def close_all(self) -> None:
        """Release every sandbox and empty the warm pool."""
        leases = list(self.by_id.values())
        for key in list(self.by_id):
            self.forget(key)
        self.by_id.clear()
        await asyncio.gather(*(self._release(lease) for lease in leases), return_exceptions=True)
        if self._pool is not None:
            await self._pool.close()

    async def close_provider(self) -> None:
        """Close the provider if this environment made it."""
        if self._owns_provider and self._provider is not None:
            await self._provider.close()

    # -- the classic client's host (`SandboxHost`) ---------------------------------------------
    def open_lease(self, request: CreateSandboxRequest) -> str:
        """Start creating a sandbox for a classic request (`sandbox_client.create`)."""
        return self.open(self.settings.spec_for_request(request), request)

    def lease_status(self, sandbox_id: str) -> tuple[str, str | None]:
        """Upstream's sandbox status for an id: PENDING, RUNNING, ERROR, TERMINATED, or
        UNKNOWN (never opened, or deleted)."""
        lease = self.by_id.get(sandbox_id)
        if lease is None or lease.task is None:
            return "UNKNOWN", None
        if lease.released:
            return "TERMINATED", None
        if not lease.task.done():
            return "PENDING", None
        if lease.task.cancelled():
            return "ERROR", "creation was cancelled"
        error = lease.task.exception()
        if error is not None:
            return "ERROR", str(error)
        box = lease.task.result()
        return ("RUNNING", None) if box.alive else ("TERMINATED", "the sandbox stopped")

    async def lease_box(self, sandbox_id: str) -> Sandbox:
        return await self.wait(sandbox_id)

    async def close_lease(self, sandbox_id: str) -> bool:
        return await self.close(sandbox_id)


async def _refuse(why: str) -> Sandbox:
    raise ProviderUnavailableError(why)
