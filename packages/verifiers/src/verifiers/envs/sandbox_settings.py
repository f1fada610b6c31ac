"""What a SandboxEnv's classic constructor keywords mean, decided once: the classic request
(`sandbox_request`), the local spec it becomes, whether the image runs as an image (the image
tier) or is stood in for by the local Python runtime, the start steps, and the creation retry
policy. SandboxEnv builds one `SandboxSettings` in its constructor; its leases read it live, so
classic code that assigns `env.spec` or `env.max_retries` afterwards still takes effect."""

from __future__ import annotations

import dataclasses
import logging
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, overload

from verifiers.envs.sandbox_client import IDLE_START_COMMANDS, CreateSandboxRequest
from verifiers.envs.sandbox_images import image_source, pip_install_argv, start_phase
from verifiers.errors import ConfigError
from verifiers.sandbox.base import MiB, Provider, RuntimeSpec, SandboxSpec

logger = logging.getLogger("verifiers.sandbox")

GiB = 1024 * MiB
# images whose tools the local runtime provides (bash, coreutils, a Python 3)
_PYTHON_IMAGE = re.compile(r"^(docker\.io/)?(library/)?python(:[\w.-]+)?$")

#: a start step: what it is (for messages) and the command (an argv or a shell string)
StartStep = tuple[str, list[str] | str]


@dataclass
class CreationRetry:
    """Exponential backoff with jitter between failed creations (upstream's keywords)."""

    max_retries: int = 5
    base_delay: float = 0.5
    backoff_factor: float = 2.0
    max_backoff_seconds: float = 30.0
    jitter: float = 1e-3

    def delay(self, attempt: int) -> float:
        """Seconds to wait before retry number `attempt + 1`."""
        delay = min(self.max_backoff_seconds, self.base_delay * self.backoff_factor**attempt)
        return delay + random.uniform(0, self.jitter)


@dataclass
class SandboxSettings:
    """Everything a SandboxEnv's sandboxes are made from (see `from_classic`)."""

    request: CreateSandboxRequest  # the classic request (`env.sandbox_request`)
    base_request: CreateSandboxRequest  # the request `spec` describes (served by the pool)
    spec: SandboxSpec
    runs_images: bool  # `docker_image` runs as an image (pulled, start command run)
    install_packages: tuple[str, ...]  # pip-installed into the image when a sandbox starts
    ignore_docker_image: bool = False
    timeout_per_command_seconds: float = 30
    start_command_timeout: float = 600
    pool_size: int = 4
    retry: CreationRetry = dataclasses.field(default_factory=CreationRetry)

    @classmethod
    def from_classic(
        cls,
        provider: Provider | None,
        request: CreateSandboxRequest,
        *,
        spec: SandboxSpec | None,
        runtime_packages: Sequence[str],
        pids_limit: int,
        network: bool,
        **rest: Any,
    ) -> SandboxSettings:
        """Settings from SandboxEnv's classic `request`, its other keywords and its resolved
        `provider` (None: the local default, made later). `rest`: the fields of this class and
        of `CreationRetry` kept as given. Raises ConfigError when the request cannot run here
        (at load time, not as an infra error in every rollout)."""
        docker_image = request.docker_image or ""
        ignore = bool(rest.get("ignore_docker_image", False))
        runs_images = not ignore and (
            getattr(provider, "supports_images", False)
            or (provider is None and wants_images(None, docker_image, ignore))
        )
        retry = CreationRetry(**{k: rest.pop(k) for k in list(rest) if k in _RETRY_FIELDS})
        settings = cls(
            request=request,
            base_request=request.model_copy(),
            spec=spec
            or SandboxSpec(
                # on the image tier the image brings its software; extra packages are
                # pip-installed into it (as upstream's PythonEnv start command does)
                runtime=RuntimeSpec()
                if runs_images
                else RuntimeSpec(packages=tuple(runtime_packages)),
                image=request.docker_image,
                cpu=float(request.cpu_cores),
                memory=int(request.memory_gb * GiB),
                pids=pids_limit,
                disk=int(request.disk_size_gb * GiB),
                lifetime=request.timeout_minutes * 60 if request.timeout_minutes else None,
                env=dict(request.environment_vars or {}),
                network=network,
            ),
            runs_images=runs_images,
            install_packages=tuple(runtime_packages) if runs_images else (),
            retry=retry,
            **rest,
        )
        settings._check(docker_image, request.start_command)
        return settings

    def _check(self, docker_image: str, start_command: str | None) -> None:
        why = self.unsupported_reason(self.request)
        if why is not None:
            raise ConfigError(why)
        if self.install_packages and not self.spec.network:
            logger.warning(
                "sandbox: packages %s are not installed into image %s: pip needs the network "
                "(network=True); the image must bring them",
                " ".join(self.install_packages),
                docker_image,
            )
            self.install_packages = ()
        if not self.runs_images and (start_command or "").strip() not in IDLE_START_COMMANDS:
            logger.warning(
                "sandbox: start_command %r is not run by local sandboxes standing in for an "
                "image (each command runs on its own; nothing long-lived is started); it runs "
                "on the image tier (docs/sandboxes.md)",
                start_command,
            )

    def unsupported_reason(self, request: CreateSandboxRequest) -> str | None:
        """Why `request` cannot be served here (None: it can). A provider that runs images
        says so with `supports_images = True`."""
        if request.gpu_count:  # no local provider has GPUs, image-capable or not
            return f"gpu_count={request.gpu_count}: local sandboxes have no GPUs"
        if self.runs_images:
            return None
        image = (request.docker_image or "").strip()
        if image and not _PYTHON_IMAGE.match(image) and not self.ignore_docker_image:
            return (
                f"docker_image {image!r} cannot run in a local sandbox (it runs the local "
                "Python runtime with bash and coreutils; writable: the workspace and /tmp). "
                "Set VF_REGISTRY_MIRROR to a registry serving Docker Hub's images (or name "
                "the image with its registry) to run it on the image tier, or pass "
                "ignore_docker_image=True to run this environment on that runtime anyway."
            )
        return None

    def spec_for_request(self, request: CreateSandboxRequest) -> SandboxSpec:
        """The local spec for a classic request: `spec` when nothing differs (so the warm pool
        serves it), else `spec` with the request's limits."""
        if request == self.base_request:
            return self.spec
        return dataclasses.replace(
            self.spec,
            image=request.docker_image,
            cpu=float(request.cpu_cores),
            memory=int(request.memory_gb * GiB),
            disk=int(request.disk_size_gb * GiB),
            lifetime=request.timeout_minutes * 60 if request.timeout_minutes else None,
            env=dict(request.environment_vars or {}),
        )

    def start_steps(self, request: CreateSandboxRequest) -> list[StartStep]:
        """What runs in a new sandbox before it is ready, on the image tier: the start
        command's preparation (without its idle tail), then the pip install of the packages.
        Nothing elsewhere (the local runtime stands in for the image)."""
        if not self.runs_images:
            return []
        steps: list[StartStep] = []
        start = start_phase(request.start_command)
        if start is not None:
            steps.append(("start command", start))
        if self.install_packages:
            steps.append(("package install", pip_install_argv(self.install_packages)))
        return steps


_RETRY_FIELDS = frozenset(f.name for f in dataclasses.fields(CreationRetry))


def wants_images(provider: Provider | str | None, docker_image: str, ignore: bool) -> bool:
    """No provider given and a registry is configured for `docker_image`: the image tier (or
    the configured tier's image variant) runs it."""
    return provider is None and not ignore and image_source(docker_image) is not None


T = TypeVar("T")


class Setting(Generic[T]):
    """An environment attribute kept on its `sandbox_settings` (or their `retry`): classic code
    reads and assigns `env.spec`, `env.max_retries`, ... and the leases see the change."""

    def __init__(self, field: str = "", *, on_retry: bool = False) -> None:
        self.name = field  # the settings' field ("": the attribute's own name)
        self.on_retry = on_retry

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = self.name or name

    def _holder(self, env: Any) -> Any:
        settings = env.__dict__.get("sandbox_settings")
        if settings is None:  # before SandboxEnv.__init__ made them (it overwrites this)
            return None
        return settings.retry if self.on_retry else settings

    @overload
    def __get__(self, env: None, owner: type) -> Setting[T]: ...
    @overload
    def __get__(self, env: object, owner: type) -> T: ...
    def __get__(self, env: object | None, owner: type) -> T | Setting[T]:
        if env is None:
            return self
        holder = self._holder(env)
        if holder is None:
            try:
                early: T = env.__dict__[self.name]
            except KeyError:
                raise AttributeError(self.name) from None
            return early
        value: T = getattr(holder, self.name)
        return value

    def __set__(self, env: object, value: T) -> None:
        holder = self._holder(env)
        if holder is None:
            env.__dict__[self.name] = value
        else:
            setattr(holder, self.name, value)
