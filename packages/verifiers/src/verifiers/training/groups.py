"""A scored group of rollouts (one example) turned into training data."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from verifiers.training.advantages import group_advantages, has_zero_variance
from verifiers.training.samples import (
    TrainingSample,
    Truncation,
    build_samples,
    check_truncation,
    is_masked,
)


@dataclass(slots=True)
class RolloutGroup:
    """The rollouts of one example with their samples, rewards and advantages.

    `rewards` are the final rewards the advantages were computed from (after the truncation
    policy); `masked[i]` says rollout i must not be learned from (infra failure or no reward):
    its samples carry an all-zero mask and advantage 0.0. `policy_versions[i]` lists the
    policy version of each model call of rollout i, in trajectory order."""

    example_id: int
    rollouts: list[Mapping[str, Any]]
    samples: list[TrainingSample]
    rewards: list[float]
    advantages: list[float]
    masked: list[bool]
    policy_versions: list[list[int]] = field(default_factory=list)
    index: int = 0  # launch order within a stream

    @property
    def oldest_version(self) -> int | None:
        versions = [v for vs in self.policy_versions for v in vs]
        return min(versions) if versions else None

    @property
    def newest_version(self) -> int | None:
        versions = [v for vs in self.policy_versions for v in vs]
        return max(versions) if versions else None

    @property
    def zero_variance(self) -> bool:
        """No learning signal: every unmasked rollout has the same reward (or none is left)."""
        return has_zero_variance(
            [r for r, m in zip(self.rewards, self.masked, strict=True) if not m]
        )

    @property
    def all_masked(self) -> bool:
        return all(self.masked)


def build_group(
    rollouts: Sequence[Mapping[str, Any]],
    *,
    max_seq_len: int | None = None,
    truncation: Truncation = "keep",
    normalize_std: bool = False,
    policy_versions: Sequence[Sequence[int]] | None = None,
    index: int = 0,
) -> RolloutGroup:
    """Samples, masks and group-relative advantages for the rollouts of one example.

    `truncation` applies to truncated samples: `"keep"` trains on them as they are, `"mask"`
    zeroes their completion mask, `"zero"` counts their rollout's reward as 0.0."""
    check_truncation(truncation)
    per_rollout: list[list[TrainingSample]] = []
    rewards: list[float] = []
    masked: list[bool] = []
    for i, rollout in enumerate(rollouts):
        versions = policy_versions[i] if policy_versions is not None else None
        samples = build_samples(
            rollout,
            max_seq_len=max_seq_len,
            step_versions=versions if versions else None,
        )
        reward = rollout.get("reward")
        bad = is_masked(rollout)
        reward = 0.0 if bad else float(reward)  # type: ignore[arg-type]
        if not bad and truncation == "zero" and any(s.is_truncated for s in samples):
            reward = 0.0
        per_rollout.append(samples)
        rewards.append(reward)
        masked.append(bad)
    advantages = group_advantages(
        rewards, normalize_std=normalize_std, valid=[not m for m in masked]
    )
    flat: list[TrainingSample] = []
    for samples, reward, advantage, bad in zip(
        per_rollout, rewards, advantages, masked, strict=True
    ):
        for sample in samples:
            sample.reward = reward
            sample.advantage = advantage
            if bad or (truncation == "mask" and sample.is_truncated):
                sample.mask_all()
        flat.extend(samples)
    example_id = int(rollouts[0].get("example_id") or 0) if rollouts else 0
    return RolloutGroup(
        example_id=example_id,
        rollouts=list(rollouts),
        samples=flat,
        rewards=rewards,
        advantages=advantages,
        masked=masked,
        policy_versions=[list(v) for v in policy_versions] if policy_versions else [],
        index=index,
    )
