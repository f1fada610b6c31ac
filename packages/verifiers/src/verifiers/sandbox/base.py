"""The sandbox interface: a spec, a result, the errors, and the two abstract classes every
provider implements (`Provider` creates sandboxes, `Sandbox` runs commands and moves files)."""

from __future__ import annotations

import abc
import asyncio
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from verifiers.errors import SandboxError

MiB = 1024 * 1024


class SandboxCreationError(SandboxError):
    """A sandbox could not be started (provider missing, agent did not come up, ...)."""


class SandboxDeadError(SandboxError):
    """The sandbox stopped answering (killed, OOM in the agent, lifetime over, closed)."""


class ProviderUnavailableError(SandboxCreationError):
    """The provider cannot run on this machine; the message says why."""


@dataclass(frozen=True)
class RuntimeSpec:
    """What the sandbox runs: a Python with extra packages built once into a cached,
    read-only environment (never pip-installed per rollout)."""

    python: str = "/usr/bin/python3"
    packages: tuple[str, ...] = ()

    def key(self) -> str:
        blob = json.dumps([self.python, sorted(self.packages)]).encode()
        return hashlib.sha256(blob).hexdigest()[:16]


@dataclass(frozen=True)
class SandboxSpec:
    """Resources and isolation of one sandbox. Sizes are bytes, times seconds."""

    runtime: RuntimeSpec = field(default_factory=RuntimeSpec)
    image: str | None = None  # for providers that run images (remote, Kubernetes)
    cpu: float = 1.0  # CPU quota in cores
    memory: int = 512 * MiB
    pids: int = 128
    disk: int = 256 * MiB  # size of the writable workspace (and of /tmp)
    network: bool = False
    lifetime: float | None = 3600.0  # the provider kills the sandbox after this long
    env: Mapping[str, str] = field(default_factory=dict)
    output_limit: int = 1 * MiB  # per stream, per command
    workdir: str = "/workspace"

    def key(self) -> str:
        """Sandboxes with the same key are interchangeable (a warm pool is kept per key)."""
        d = asdict(self)
        d["env"] = sorted(self.env.items())
        return hashlib.sha256(json.dumps(d, sort_keys=True, default=str).encode()).hexdigest()[:16]


@dataclass
class ExecResult:
    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool = False
    truncated: bool = False
    duration: float = 0.0  # seconds, measured inside the sandbox

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


@dataclass(frozen=True, slots=True)
class ExecRequest:
    """One `Sandbox.exec` call, its arguments in the forms every provider sends on: `cmd` a
    shell string or an argv list, `stdin` bytes, `env` a plain dict."""

    cmd: str | list[str]
    timeout: float
    stdin: bytes | None
    cwd: str | None
    env: dict[str, str]


class Sandbox(abc.ABC):
    """One isolated machine. Not shared between rollouts; `close` is idempotent."""

    id: str
    spec: SandboxSpec

    async def exec(
        self,
        cmd: str | Sequence[str],
        timeout: float = 30.0,  # noqa: ASYNC109
        stdin: str | bytes | None = None,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ExecResult:
        """Run `cmd` (a shell string or an argv); the whole process tree is killed on timeout."""
        return await self.run(
            ExecRequest(
                cmd if isinstance(cmd, str) else list(cmd),
                timeout,
                stdin.encode() if isinstance(stdin, str) else stdin,
                cwd,
                dict(env or {}),
            )
        )

    @abc.abstractmethod
    async def run(self, request: ExecRequest) -> ExecResult:
        """Carry out one `exec` call (the provider's part: the arguments are normalised)."""

    @abc.abstractmethod
    async def write_file(self, path: str, data: str | bytes, mode: int = 0o644) -> None: ...

    @abc.abstractmethod
    async def read_file(self, path: str) -> bytes: ...

    @abc.abstractmethod
    async def write_dir(self, path: str, files: Mapping[str, str | bytes]) -> None:
        """Create `path` holding `files` (relative name -> content)."""

    @abc.abstractmethod
    async def read_dir(self, path: str) -> dict[str, bytes]:
        """Every regular file below `path`, by relative name."""

    @abc.abstractmethod
    async def close(self) -> None: ...

    @property
    @abc.abstractmethod
    def alive(self) -> bool: ...

    async def python(self, code: str, timeout: float = 30.0) -> dict[str, Any]:  # noqa: ASYNC109
        """Run `code` in the sandbox's persistent Python REPL (state kept between calls).
        Returns {status, stdout, stderr, result, timed_out}."""
        raise NotImplementedError(f"{type(self).__name__} has no persistent REPL")

    async def __aenter__(self) -> Sandbox:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class Provider(abc.ABC):
    """Creates sandboxes. `name` says which isolation tier it is."""

    name: str = "provider"

    @abc.abstractmethod
    async def create(self, spec: SandboxSpec | None = None) -> Sandbox: ...

    async def create_many(self, n: int, spec: SandboxSpec | None = None) -> list[Sandbox]:
        """Create `n` sandboxes; if any fails, close the ones that started and raise."""
        results = await asyncio.gather(
            *(self.create(spec) for _ in range(n)), return_exceptions=True
        )
        boxes = [r for r in results if isinstance(r, Sandbox)]
        errors = [r for r in results if isinstance(r, BaseException)]
        if errors:
            await close_all(boxes)
            raise errors[0]
        return boxes

    async def close(self) -> None:  # noqa: B027 (optional hook)
        """Release provider-wide resources (sandboxes are closed individually)."""


async def close_all(boxes: Sequence[Sandbox]) -> None:
    """Close many sandboxes concurrently; errors are swallowed (closing is best effort)."""
    await asyncio.gather(*(b.close() for b in boxes), return_exceptions=True)
