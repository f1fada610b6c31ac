"""Isolated code execution: one async interface (`Provider` -> `Sandbox`), a local bubblewrap
provider with cgroup limits, a gVisor tier, a weaker process tier, a warm pool, and the stdlib
agent that serves commands inside every one of them."""

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
from verifiers.sandbox.pool import SandboxPool
from verifiers.sandbox.process import ProcessProvider
from verifiers.sandbox.runsc import RunscProvider

__all__ = [
    "BwrapProvider",
    "ExecResult",
    "ProcessProvider",
    "Provider",
    "ProviderUnavailableError",
    "RunscProvider",
    "RuntimeSpec",
    "Sandbox",
    "SandboxCreationError",
    "SandboxDeadError",
    "SandboxPool",
    "SandboxSpec",
    "close_all",
]
