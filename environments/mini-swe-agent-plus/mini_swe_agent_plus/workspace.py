"""Each rollout's repository in its sandbox: put in place as soon as the sandbox is up (during
the first model call), an image task's hidden tests kept on this side until scoring, and the
work cancelled when the rollout's sandbox is released."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from mini_swe_agent_plus import images
from mini_swe_agent_plus.tasks import SWETask
from verifiers import SandboxError, State
from verifiers.sandbox import Sandbox

REPO = "repo"  # the repository, relative to the sandbox's workspace: works on every provider


async def cancel_jobs(jobs: Iterable[asyncio.Task[Any] | None]) -> None:
    """Cancel these background jobs and wait until they have ended."""
    pending = [job for job in jobs if job is not None]
    for job in pending:
        job.cancel()
    await asyncio.gather(*pending, return_exceptions=True)


class RepoWorkspaces:
    """The repositories of the running rollouts, by sandbox id.

    `lease_box` waits for a sandbox id's sandbox; `rollout_box` for a rollout's (recording the
    wait in its state): the environment's `lease_box` and `get_sandbox`."""

    def __init__(
        self,
        lease_box: Callable[[str], Awaitable[Sandbox]],
        rollout_box: Callable[[State], Awaitable[Sandbox]],
    ) -> None:
        self._lease_box = lease_box
        self._rollout_box = rollout_box
        self._jobs: dict[str, asyncio.Task[None]] = {}
        self._withheld: dict[str, dict[str, Any]] = {}  # image tasks' hidden tests

    def start(self, key: str, task: SWETask) -> None:
        """Start putting `task`'s repository into the sandbox `key` (in the background)."""
        work = self._prepare_image(key, task) if task.docker_image else self._write_repo(key, task)
        job = asyncio.get_running_loop().create_task(work)
        job.add_done_callback(lambda t: t.cancelled() or t.exception())
        self._jobs[key] = job

    async def _write_repo(self, key: str, task: SWETask) -> None:
        """A task given as files: write them. The hidden tests stay on this side."""
        box = await self._lease_box(key)
        try:
            await box.write_dir(REPO, task.repo_files)
        except OSError as e:  # the rollout cannot start: not the model's doing
            raise SandboxError(f"could not write the repository into the sandbox: {e}") from e

    async def _prepare_image(self, key: str, task: SWETask) -> None:
        """An image task: set its sandbox up and take its hidden tests out until scoring."""
        box = await self._lease_box(key)
        self._withheld[key] = await images.prepare(box, task)

    async def box(self, state: State) -> Sandbox:
        """This rollout's sandbox with the repository in place."""
        job = self._jobs.get(state["sandbox_id"])
        if job is None:
            raise SandboxError("this rollout's sandbox has been released")
        await asyncio.shield(job)
        return await self._rollout_box(state)

    def withheld(self, key: str) -> dict[str, Any]:
        """The hidden tests taken out of the image task's sandbox `key`."""
        withheld = self._withheld.get(key)
        if withheld is None:
            raise SandboxError("this rollout's sandbox has been released")
        return withheld

    def release(self, key: str) -> asyncio.Task[None] | None:
        """Forget the sandbox `key`; its setup job, for the caller to cancel if still running."""
        self._withheld.pop(key, None)
        job = self._jobs.pop(key, None)
        return job if job is not None and not job.done() else None

    def release_all(self) -> list[asyncio.Task[None]]:
        """Forget every sandbox; their setup jobs, for the caller to cancel."""
        jobs = list(self._jobs.values())
        self._jobs.clear()
        self._withheld.clear()
        return jobs
