"""The classic `env.sandbox_client`: the part of upstream's `AsyncSandboxClient` (prime-sandboxes)
that classic SandboxEnv subclasses call, served by the env's local sandboxes.

Upstream environments reach past the `bash` tool into the client: `execute_command` in
`post_rollout` to grade, `upload_file` to ship helpers, `create`/`wait_for_creation` to make
their own per-rollout sandbox, `start_background_job` for long test runs. Here each call resolves
the sandbox id (a rollout's `state["sandbox_id"]`, or the id `create` returned) to the env's
local sandbox, and answers with result objects carrying the fields classic code reads
(`.stdout`, `.stderr`, `.exit_code`, `.id`, `.status`, `.completed`, ...).

What differs locally, on purpose:
* ids are the env's lease keys, not platform ids; an unknown or deleted id is an `APIError`.
* `user=` is ignored: a local sandbox has one unprivileged user.
* background jobs run as a host-side task over the sandbox's command channel (the sandbox agent
  ends every background process when its request returns), so commands sent to the same
  sandbox while a job runs wait for it.
* timeouts raise `CommandTimeoutError`; a sandbox that died raises `SandboxNotRunningError`, an
  infra error. If the environment imported `prime_sandboxes`, the raised classes also subclass
  its classes of the same name, so `except prime_sandboxes.CommandTimeoutError` still matches.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import shlex
import sys
import uuid
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from verifiers.errors import SandboxError
from verifiers.sandbox.base import ExecResult, Sandbox, SandboxDeadError

DEFAULT_COMMAND_TIMEOUT = 300  # seconds; upstream's client default when `timeout` is None
IDLE_START_COMMANDS = frozenset({"", "tail -f /dev/null", "sleep infinity"})


# -- request and result models (the fields classic environments construct and read) ----------
class AdvancedConfigs(BaseModel):
    """Platform settings of a sandbox; no local meaning (kept on the request)."""

    model_config = ConfigDict(extra="allow")


class CreateSandboxRequest(BaseModel):
    """What a sandbox should be. Locally: cpu, memory, disk, timeout and env vars become the
    sandbox's limits and environment; the image runs on the image tier, or is stood in for by
    the local Python runtime (see SandboxEnv)."""

    model_config = ConfigDict(extra="allow")

    name: str = "sandbox-env"
    docker_image: str | None = "python:3.11-slim"
    start_command: str | None = "tail -f /dev/null"
    cpu_cores: float = 1
    memory_gb: float = 2
    disk_size_gb: float = 5
    gpu_count: int = 0
    timeout_minutes: float = 60
    environment_vars: dict[str, str] | None = None
    team_id: str | None = None
    advanced_configs: AdvancedConfigs | None = None
    labels: list[str] = Field(default_factory=list)


class SandboxInfo(BaseModel):
    """Upstream's `Sandbox` model (what `create` and `get` return)."""

    id: str
    name: str
    docker_image: str | None
    status: str  # PENDING, RUNNING, ERROR, TERMINATED
    cpu_cores: float
    memory_gb: float
    disk_size_gb: float
    gpu_count: int = 0
    timeout_minutes: float
    labels: list[str] = Field(default_factory=list)
    created_at: datetime
    error_message: str | None = None


# what a sandbox's info repeats of the request it was created from (name, image, limits,
# labels): the fields the two models share
_INFO_FROM_REQUEST = set(SandboxInfo.model_fields) & set(CreateSandboxRequest.model_fields)


class CommandResponse(BaseModel):
    stdout: str
    stderr: str
    exit_code: int
    truncated: bool = False  # ours: an output stream hit the sandbox's output limit


class BackgroundJob(BaseModel):
    job_id: str
    sandbox_id: str
    stdout_log_file: str
    stderr_log_file: str
    exit_file: str


class BackgroundJobStatus(BaseModel):
    job_id: str
    completed: bool
    exit_code: int | None = None
    stdout: str | None = None
    stderr: str | None = None


class FileUploadResponse(BaseModel):
    success: bool
    path: str
    size: int
    timestamp: datetime


class ReadFileResponse(BaseModel):
    content: str
    size: int


class BulkDeleteSandboxResponse(BaseModel):
    succeeded: list[str]
    failed: list[dict[str, str]]
    message: str


# -- errors ----------------------------------------------------------------------------------
class APIError(SandboxError):
    """A request the client cannot serve: unknown or deleted id, a file operation refused."""


class SandboxNotRunningError(SandboxDeadError, RuntimeError):
    """The sandbox could not be created, or is gone (killed, OOM, past its lifetime, deleted)."""

    def __init__(self, sandbox_id: str, message: str, status: str = "ERROR") -> None:
        Exception.__init__(self, message)  # not prime's __init__ (other arguments)
        self.sandbox_id, self.status, self.message = sandbox_id, status, message
        self.error_type: str | None = None
        self.command: str | None = None


class CommandTimeoutError(RuntimeError):
    """The command ran past its timeout and was killed (the model's doing, not infra)."""

    def __init__(self, sandbox_id: str, command: str, timeout: float) -> None:
        # Exception.__init__ directly: with prime's class as a second base, its own __init__
        # must not run a second time with other arguments
        Exception.__init__(self, f"command timed out after {timeout:g}s in sandbox {sandbox_id}")
        self.sandbox_id, self.command, self.timeout = sandbox_id, command, timeout


_PRIME_TWINS: dict[tuple[type, type], type] = {}


def _compatible(cls: type[Exception]) -> type[Exception]:
    """`cls`, or a subclass that also subclasses prime_sandboxes' class of the same name when
    the environment imported prime_sandboxes (never imported here)."""
    prime = sys.modules.get("prime_sandboxes")
    twin = getattr(prime, cls.__name__, None) if prime is not None else None
    if not isinstance(twin, type) or not issubclass(twin, BaseException) or issubclass(cls, twin):
        return cls
    key = (cls, twin)
    if key not in _PRIME_TWINS:
        _PRIME_TWINS[key] = type(cls.__name__, (cls, twin), {"__module__": cls.__module__})
    return _PRIME_TWINS[key]


async def _logged_job(
    box: Sandbox, job: BackgroundJob, run: Callable[[], Awaitable[ExecResult]]
) -> ExecResult:
    """A background job: its command (`run()`), then the log files upstream's job writes,
    for environments that read them back."""
    result = await run()
    for path, data in (
        (job.stdout_log_file, result.stdout),
        (job.stderr_log_file, result.stderr),
        (job.exit_file, str(result.exit_code)),
    ):
        try:
            await box.write_file(path, data)
        except (OSError, SandboxError):
            break
    return result


def _not_running(sandbox_id: str, e: BaseException) -> SandboxNotRunningError:
    cls = _compatible(SandboxNotRunningError)
    return cls(sandbox_id, f"sandbox {sandbox_id} is not running: {e}")  # type: ignore[call-arg,return-value]


def _full(box: Sandbox, e: BaseException) -> str:
    """A hint naming the cap when a write failed because the sandbox's disk is full."""
    if "No space left on device" not in str(e) and getattr(e, "errno", None) != errno.ENOSPC:
        return ""
    size = box.spec.disk / (1 << 30)
    shown = f"{size:g} GiB" if size >= 1 else f"{box.spec.disk / (1 << 20):g} MiB"
    return f" (the sandbox's disk, disk_size_gb: {shown}, is full)"


def in_dir(command: str, working_dir: str | None) -> str:
    """`command` run from `working_dir`: a `cd` first (on its own line, so heredocs in the
    command stay intact), so a missing directory fails as `cd: DIR: No such file or directory`
    with a nonzero exit, as in a container, not as a failure to start bash."""
    if not working_dir:
        return command
    return f"cd -- {shlex.quote(working_dir)} || exit\n{command}"


def _finished(job_id: str, result: ExecResult | CommandResponse) -> BackgroundJobStatus:
    """The status of a background job that ended with `result`."""
    return BackgroundJobStatus(
        job_id=job_id,
        completed=True,
        exit_code=result.exit_code,
        stdout=result.stdout,
        stderr=result.stderr,
    )


# -- the client ------------------------------------------------------------------------------
class SandboxHost(Protocol):
    """What the client needs from its environment (SandboxEnv implements it)."""

    def open_lease(self, request: CreateSandboxRequest) -> str: ...

    def lease_status(self, sandbox_id: str) -> tuple[str, str | None]: ...

    async def lease_box(self, sandbox_id: str) -> Sandbox: ...

    async def close_lease(self, sandbox_id: str) -> bool: ...


def as_request(request: Any) -> CreateSandboxRequest:
    """Our request from ours, a prime_sandboxes request or any object with the same fields."""
    if isinstance(request, CreateSandboxRequest):
        return request
    data = request.model_dump() if hasattr(request, "model_dump") else dict(vars(request))
    start = data.get("start_command")
    if isinstance(start, Mapping):  # newer prime-sandboxes: StartCommand(command=...)
        data["start_command"] = start.get("command") or start.get("cmd")
    configs = data.get("advanced_configs")
    if configs is not None and not isinstance(configs, Mapping):
        data["advanced_configs"] = dict(getattr(configs, "__dict__", {}))
    return CreateSandboxRequest.model_validate({k: v for k, v in data.items() if v is not None})


class LocalSandboxClient:
    """`env.sandbox_client`: upstream's AsyncSandboxClient calls over the env's local sandboxes."""

    def __init__(self, host: SandboxHost) -> None:
        self._host = host
        self._requests: dict[str, CreateSandboxRequest] = {}
        self._created: dict[str, datetime] = {}
        self._jobs: dict[str, asyncio.Task[ExecResult]] = {}

    # -- lifecycle ---------------------------------------------------------------------------
    async def create(self, request: Any) -> SandboxInfo:
        """Start creating a sandbox (returns at once; `wait_for_creation` waits for it)."""
        req = as_request(request)
        sandbox_id = self._host.open_lease(req)
        self.remember(sandbox_id, req)
        return await self.get(sandbox_id)

    def remember(self, sandbox_id: str, request: CreateSandboxRequest) -> None:
        """Record a sandbox the env opened itself (its rollout sandboxes), for `get`."""
        self._requests[sandbox_id] = request
        self._created[sandbox_id] = datetime.now(UTC)

    def forget(self, sandbox_id: str) -> None:
        self._requests.pop(sandbox_id, None)
        self._created.pop(sandbox_id, None)
        job_ids = [j for j in self._jobs if j.startswith(f"{sandbox_id}:")]
        for job_id in job_ids:
            task = self._jobs.pop(job_id)
            if not task.done():
                task.cancel()

    async def get(self, sandbox_id: str) -> SandboxInfo:
        status, error = self._host.lease_status(sandbox_id)
        req = self._requests.get(sandbox_id)
        if status == "UNKNOWN" or req is None:
            raise _compatible(APIError)(f"sandbox {sandbox_id} not found")
        return SandboxInfo(
            **req.model_dump(include=_INFO_FROM_REQUEST),
            id=sandbox_id,
            status=status,
            created_at=self._created[sandbox_id],
            error_message=error,
        )

    async def wait_for_creation(self, sandbox_id: str, max_attempts: int = 60, **_: Any) -> None:
        """Wait until the sandbox runs. `max_attempts` (a polling budget upstream) has no local
        meaning: creation already retries with backoff and then fails for good."""
        await self._box(sandbox_id)

    async def delete(self, sandbox_id: str) -> dict[str, Any]:
        if not await self._host.close_lease(sandbox_id):
            raise _compatible(APIError)(f"sandbox {sandbox_id} not found")
        self.forget(sandbox_id)
        return {"id": sandbox_id, "status": "TERMINATED"}

    async def bulk_delete(
        self, sandbox_ids: list[str] | None = None, labels: list[str] | None = None, **_: Any
    ) -> BulkDeleteSandboxResponse:
        """Delete by id, or every sandbox of this env carrying all of `labels`."""
        ids = list(sandbox_ids or [])
        if labels:
            ids += [
                i
                for i, r in self._requests.items()
                if set(labels) <= set(r.labels) and i not in ids
            ]
        succeeded, failed = [], []
        for sandbox_id in ids:
            try:
                await self.delete(sandbox_id)
                succeeded.append(sandbox_id)
            except APIError as e:
                failed.append({"id": sandbox_id, "error": str(e)})
        return BulkDeleteSandboxResponse(
            succeeded=succeeded, failed=failed, message=f"deleted {len(succeeded)} sandbox(es)"
        )

    def teardown(self) -> None:
        """Upstream's threaded client shuts its threads down here; nothing is held locally
        (the env's teardown closes the sandboxes)."""

    async def aclose(self) -> None:
        for task in self._jobs.values():
            task.cancel()
        self._jobs.clear()

    # -- commands ----------------------------------------------------------------------------
    async def execute_command(
        self,
        sandbox_id: str,
        command: str,
        working_dir: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float | None = None,  # noqa: ASYNC109
        user: str | None = None,  # one unprivileged user locally
    ) -> CommandResponse:
        """Run a bash command; raises CommandTimeoutError past `timeout` (default 300 s)."""
        box = await self._box(sandbox_id)
        limit = DEFAULT_COMMAND_TIMEOUT if timeout is None else timeout
        result = await self._exec(sandbox_id, box, command, limit, working_dir, env)
        if result.timed_out:
            raise _compatible(CommandTimeoutError)(sandbox_id, command, limit)
        return CommandResponse(
            stdout=result.stdout,
            stderr=result.stderr,
            exit_code=result.exit_code,
            truncated=result.truncated,
        )

    async def start_background_job(
        self,
        sandbox_id: str,
        command: str,
        working_dir: str | None = None,
        env: dict[str, str] | None = None,
        user: str | None = None,
    ) -> BackgroundJob:
        box = await self._box(sandbox_id)
        job_id = uuid.uuid4().hex[:8]
        job = BackgroundJob(
            job_id=job_id,
            sandbox_id=sandbox_id,
            stdout_log_file=f"/tmp/job_{job_id}.stdout.log",
            stderr_log_file=f"/tmp/job_{job_id}.stderr.log",
            exit_file=f"/tmp/job_{job_id}.exit",
        )
        # bounded by the sandbox's own lifetime (it is killed then, and the job with it)
        lifetime = box.spec.lifetime or 24 * 3600.0
        run = functools.partial(self._exec, sandbox_id, box, command, lifetime, working_dir, env)
        task = asyncio.get_running_loop().create_task(_logged_job(box, job, run))
        task.add_done_callback(lambda t: t.cancelled() or t.exception())
        self._jobs[f"{sandbox_id}:{job_id}"] = task
        return job

    async def get_background_job(
        self,
        sandbox_id: str,
        job: BackgroundJob,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> BackgroundJobStatus:
        task = self._jobs.get(f"{sandbox_id}:{job.job_id}")
        if task is None:
            raise _compatible(APIError)(f"no background job {job.job_id} in sandbox {sandbox_id}")
        if not task.done():
            return BackgroundJobStatus(job_id=job.job_id, completed=False)
        if task.cancelled():
            raise _not_running(sandbox_id, RuntimeError("the job was cancelled"))
        error = task.exception()
        if error is not None:
            raise error
        return _finished(job.job_id, task.result())

    async def run_background_job(
        self,
        sandbox_id: str,
        command: str,
        timeout: float = 900,  # noqa: ASYNC109
        working_dir: str | None = None,
        env: dict[str, str] | None = None,
        poll_interval: float = 3,
    ) -> BackgroundJobStatus:
        """Run to completion (no polling needed locally); CommandTimeoutError past `timeout`."""
        response = await self.execute_command(sandbox_id, command, working_dir, env, timeout)
        return _finished(uuid.uuid4().hex[:8], response)

    # -- files -------------------------------------------------------------------------------
    async def upload_file(
        self,
        sandbox_id: str,
        file_path: str,
        local_file_path: str,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> FileUploadResponse:
        try:
            data = await asyncio.to_thread(Path(local_file_path).read_bytes)
        except FileNotFoundError:
            raise FileNotFoundError(f"Local file not found: {local_file_path}") from None
        return await self.upload_bytes(sandbox_id, file_path, data, Path(local_file_path).name)

    async def upload_bytes(
        self,
        sandbox_id: str,
        file_path: str,
        file_bytes: bytes,
        filename: str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> FileUploadResponse:
        box = await self._box(sandbox_id)
        try:
            await box.write_file(file_path, file_bytes)
        except SandboxDeadError as e:
            raise _not_running(sandbox_id, e) from e
        except OSError as e:
            raise _compatible(APIError)(f"upload to {file_path} failed: {e}{_full(box, e)}") from e
        return FileUploadResponse(
            success=True, path=file_path, size=len(file_bytes), timestamp=datetime.now(UTC)
        )

    async def download_file(
        self,
        sandbox_id: str,
        file_path: str,
        local_file_path: str,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> None:
        data = await self._read(sandbox_id, file_path)
        target = Path(local_file_path)
        await asyncio.to_thread(target.parent.mkdir, parents=True, exist_ok=True)
        await asyncio.to_thread(target.write_bytes, data)

    async def read_file(
        self,
        sandbox_id: str,
        file_path: str,
        timeout: float | None = None,  # noqa: ASYNC109
        offset: int | None = None,
        length: int | None = None,
    ) -> ReadFileResponse:
        data = await self._read(sandbox_id, file_path)
        if offset is not None or length is not None:
            start = offset or 0
            data = data[start : None if length is None else start + length]
        return ReadFileResponse(content=data.decode(errors="replace"), size=len(data))

    # -- helpers -----------------------------------------------------------------------------
    async def _box(self, sandbox_id: str) -> Sandbox:
        status, _ = self._host.lease_status(sandbox_id)
        if status == "UNKNOWN":
            raise _compatible(APIError)(f"sandbox {sandbox_id} not found")
        try:
            return await self._host.lease_box(sandbox_id)
        except SandboxError as e:
            if isinstance(e, SandboxNotRunningError):
                raise
            raise _not_running(sandbox_id, e) from e

    async def _exec(
        self,
        sandbox_id: str,
        box: Sandbox,
        command: str,
        timeout: float,  # noqa: ASYNC109
        working_dir: str | None,
        env: dict[str, str] | None,
    ) -> ExecResult:
        try:
            return await box.exec(in_dir(command, working_dir), timeout=timeout, env=env)
        except SandboxDeadError as e:
            raise _not_running(sandbox_id, e) from e
        except OSError as e:  # the agent refused the request
            raise _compatible(APIError)(f"command could not start: {e}") from e

    async def _read(self, sandbox_id: str, file_path: str) -> bytes:
        box = await self._box(sandbox_id)
        try:
            return await box.read_file(file_path)
        except SandboxDeadError as e:
            raise _not_running(sandbox_id, e) from e
        except OSError as e:
            raise _compatible(APIError)(f"reading {file_path} failed: {e}") from e
