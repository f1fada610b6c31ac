"""What the tiers whose sandbox is one child process running the agent, in its own cgroup,
share (the process tier and the gVisor tier): the admission check, the cgroup and the agent's
start with cleanup when either fails, the support folder made on first use, and closing."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Generic, TypeVar

from verifiers.sandbox import cgroups
from verifiers.sandbox.agent_client import READ_LIMIT, AgentSandbox
from verifiers.sandbox.base import (
    Provider,
    ProviderUnavailableError,
    SandboxCreationError,
    SandboxSpec,
)
from verifiers.sandbox.live import LiveSandboxes

B = TypeVar("B", bound=AgentSandbox)


class ChildAgentProvider(Provider, Generic[B]):
    """A provider whose sandboxes are agent processes it starts itself, as `uid`."""

    def __init__(self, uid: int, start_timeout: float) -> None:
        self.uid = uid
        self.start_timeout = start_timeout
        self._dir: Path | None = None  # the support folder, made on first use
        self._live: LiveSandboxes[B] = LiveSandboxes()

    @staticmethod
    def unavailable_reason() -> str | None:
        """None when this provider can run here; otherwise a sentence saying why not."""
        raise NotImplementedError

    async def _admit(self, spec: SandboxSpec | None) -> SandboxSpec:
        """The spec to create (None: the default) once this provider is known to run here; the
        sandboxes of event loops that have ended are closed first."""
        spec = spec or SandboxSpec()
        reason = self.unavailable_reason()
        if reason:
            raise ProviderUnavailableError(reason)
        await self._live.close_with_loop()
        return spec

    @staticmethod
    def _cgroup(name: str, memory: int, pids: int, cpu: float, folder: Path) -> cgroups.Cgroup:
        """A new cgroup with these limits; the sandbox's own `folder` goes when none can be
        made."""
        try:
            return cgroups.for_sandbox(name, memory, pids, cpu)
        except SandboxCreationError:
            shutil.rmtree(folder, ignore_errors=True)
            raise

    @staticmethod
    async def _start_agent(
        argv: Sequence[str],
        folder: Path,
        env: Mapping[str, str],
        child_setup: Callable[[], None],
        cg: cgroups.Cgroup,
        what: str,
    ) -> asyncio.subprocess.Process:
        """The agent's process, run in the sandbox's own `folder` and talking on its stdin and
        stdout; when it cannot start (or the start is cancelled) its cgroup and `folder` go,
        and `what` names it in the error."""
        try:
            return await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
                cwd=str(folder),
                env=env,
                preexec_fn=child_setup,
                start_new_session=True,
                limit=READ_LIMIT,
            )
        except BaseException as e:
            cgroups.remove(cg)
            shutil.rmtree(folder, ignore_errors=True)
            if isinstance(e, Exception):
                raise SandboxCreationError(f"cannot start {what}: {e}") from e
            raise

    async def close(self) -> None:
        await self._live.close_and_reclaim()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
