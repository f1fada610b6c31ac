"""Every sandbox tier (the local ones, and the Ray tier running them on cluster nodes) and
what it promises. The isolation test suite (tests/test_sandbox_isolation.py) runs, unchanged,
against each entry of `TIERS`, and a test fails when a `Provider` subclass of this package is
missing here: a tier cannot be added without declaring its promises and having them checked."""

from __future__ import annotations

from verifiers.sandbox.base import Provider
from verifiers.sandbox.local_tiers import ISOLATING_LOCAL_TIERS, PROCESS_TIER, Promises, Tier
from verifiers.sandbox.ray_tier import RayProvider

TIERS: tuple[Tier, ...] = (
    *ISOLATING_LOCAL_TIERS,
    # sandboxes on the nodes of a Ray cluster, in host actors running bwrap-zygote (the image
    # tier for specs naming an image) there; "local": this process's cluster, else a
    # single-node instance on loopback (what this suite runs; stop_local_ray() stops it)
    Tier("ray", RayProvider, Promises(), {"address": "local", "sandboxes_per_node": 8}),
    PROCESS_TIER,
)


def tier_of(provider: Provider) -> Tier:
    """The entry of `TIERS` a provider instance is (a BwrapProvider: by whether it forks)."""
    for tier in TIERS:
        zygote = tier.options.get("zygote")
        if type(provider) is tier.provider and (
            zygote is None or getattr(provider, "use_zygote", None) == zygote
        ):
            return tier
    raise LookupError(f"{type(provider).__name__} is not a registered sandbox tier")
