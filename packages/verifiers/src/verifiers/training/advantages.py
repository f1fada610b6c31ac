"""Group-relative advantages from final rewards."""

from __future__ import annotations

import math
from collections.abc import Sequence


def group_advantages(
    rewards: Sequence[float],
    *,
    normalize_std: bool = False,
    valid: Sequence[bool] | None = None,
    eps: float = 1e-6,
) -> list[float]:
    """`reward - mean(group)` for each rollout; with `normalize_std`, divided by the group's
    (population) standard deviation + `eps`.

    Only valid rollouts (all by default; a non-finite reward is never valid) form the baseline;
    the others get advantage 0.0, so a masked rollout neither learns nor shifts the rest."""
    ok = [
        (valid is None or valid[i]) and r is not None and math.isfinite(r)
        for i, r in enumerate(rewards)
    ]
    used = [r for r, good in zip(rewards, ok, strict=True) if good]
    if not used:
        return [0.0] * len(rewards)
    mean = sum(used) / len(used)
    scale = 1.0
    if normalize_std:
        std = math.sqrt(sum((r - mean) ** 2 for r in used) / len(used))
        scale = std + eps
    return [(r - mean) / scale if good else 0.0 for r, good in zip(rewards, ok, strict=True)]


def has_zero_variance(rewards: Sequence[float]) -> bool:
    """All (finite) rewards equal: the group carries no learning signal."""
    finite = [r for r in rewards if r is not None and math.isfinite(r)]
    return all(r == finite[0] for r in finite)
