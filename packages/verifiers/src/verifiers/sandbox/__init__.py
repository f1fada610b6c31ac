"""Isolated code execution: one async interface (`Provider` -> `Sandbox`), a local bubblewrap
provider with cgroup limits, a warm pool, and the stdlib agent that serves commands inside."""

from verifiers.sandbox.base import (
    ExecResult,
    Provider,
    ProviderUnavailableError,
    RuntimeSpec,
    Sandbox,
    SandboxCreationError,
    SandboxDeadError,
    SandboxSpec,
    close_all,
)
from verifiers.sandbox.bwrap import BwrapProvider

__all__ = [
    "BwrapProvider",
    "ExecResult",
    "Provider",
    "ProviderUnavailableError",
    "RuntimeSpec",
    "Sandbox",
    "SandboxCreationError",
    "SandboxDeadError",
    "SandboxSpec",
    "close_all",
]
