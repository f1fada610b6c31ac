"""The sandbox tiers that run on this machine, and the `Promises`/`Tier` records every tier
(the Ray tier too, in `verifiers.sandbox.tiers`) is declared with. The Ray tier's per-node host
(`verifiers.ray.sandbox_host`) runs the isolating ones, so they live apart from the full list,
which includes the Ray tier itself."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from verifiers.sandbox.base import Provider
from verifiers.sandbox.bwrap import BwrapProvider
from verifiers.sandbox.image import ImageProvider
from verifiers.sandbox.process import ProcessProvider
from verifiers.sandbox.runsc import RunscProvider


@dataclass(frozen=True)
class Promises:
    """Each field is one property of docs/sandboxes.md's isolation contract. A tier declares
    False only for what it really does not do (the suite checks the weakness is real too,
    so a declaration cannot fall behind the code)."""

    # the agent and every command start from `contract.sandbox_environ` (+ their `env=`)
    explicit_env: bool = True
    # no process visible inside carries the host's environment or command lines
    host_env_hidden: bool = True
    # /proc shows the sandbox's own processes only
    host_processes_hidden: bool = True
    # no host path in any visible command line, environment, cwd or the mount table
    host_paths_hidden: bool = True
    # no network (loopback of its own only) unless `SandboxSpec(network=True)`
    network_cut: bool = True
    # `SandboxSpec(network=True)` starts and reaches the host's network
    network_opt_in: bool = True
    # writes land only in the sandbox's own workspace and /tmp, gone with it
    writes_confined: bool = True
    # after `close`, no process, cgroup or directory of the sandbox is left, nothing unreaped
    cleanup: bool = True

    @property
    def isolating(self) -> bool:
        return (
            self.host_env_hidden
            and self.host_processes_hidden
            and self.host_paths_hidden
            and self.network_cut
            and self.writes_confined
        )


@dataclass(frozen=True)
class Tier:
    name: str
    provider: type[Provider]
    promises: Promises
    options: Mapping[str, Any] = field(default_factory=dict)

    def make(self) -> Provider:
        return self.provider(**self.options)

    def unavailable_reason(self) -> str | None:
        return self.provider.unavailable_reason()  # type: ignore[attr-defined]


ISOLATING_LOCAL_TIERS: tuple[Tier, ...] = (
    # the default: sandboxes cloned from the zygote
    Tier("bwrap-zygote", BwrapProvider, Promises(), {"zygote": True}),
    # bwrap exec'd per sandbox: the zygote's automatic fallback, and what network=True uses
    Tier("bwrap-exec", BwrapProvider, Promises(), {"zygote": False}),
    # container images (SandboxSpec.image) as the root, bwrap exec'd per sandbox; without an
    # image, the bwrap layout on an empty read-only overlay (what this suite sees)
    Tier("image", ImageProvider, Promises()),
    # gVisor: an application kernel in between; no network=True (runsc runs --network=none)
    Tier("runsc", RunscProvider, Promises(network_opt_in=False)),
)

# NOT isolating (uid drop, cgroups, rlimits, explicit environment; the host's namespaces):
# never chosen automatically, only when asked for by name
PROCESS_TIER = Tier(
    "process",
    ProcessProvider,
    Promises(
        host_env_hidden=False,
        host_processes_hidden=False,
        host_paths_hidden=False,
        network_cut=False,
        writes_confined=False,
    ),
)
