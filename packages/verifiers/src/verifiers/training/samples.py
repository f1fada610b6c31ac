"""Training samples from a rollout's recorded token data, merged across turns when exact.

Each model call of a rollout is recorded on its trajectory step with the ids the server
returned (`prompt_ids`, `completion_ids`, `completion_logprobs`). Consecutive calls become one
sample when the later prompt starts with the earlier prompt + completion token for token; the
tokens in between (tool results, user turns, template glue) join the completion with mask 0
and logprob 0. When a prompt does not extend the previous sequence (thinking stripped from
history, context rewritten or compacted) a new sample starts. No text is ever re-tokenised.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from verifiers.errors import ConfigError, TrainingDataError
from verifiers.openai_wire import TOKEN_SAMPLING_ARGS as TOKEN_SAMPLING_ARGS  # its old home

Truncation = Literal["keep", "mask", "zero"]
TRUNCATION_MODES: tuple[Truncation, ...] = ("keep", "mask", "zero")


@dataclass(slots=True)
class TrainingSample:
    """One training sequence: `prompt_ids + completion_ids`, loss on `completion_mask == 1`.

    `turns` are the indices of the trajectory steps merged into it; `policy_version` is the
    oldest policy version any of those turns was sampled under (None when untagged).
    `is_truncated`: cut to `max_seq_len` here, or a merged turn was itself cut (finish reason
    `length`, or the environment's own `max_seq_len`)."""

    prompt_ids: list[int]
    completion_ids: list[int]
    completion_mask: list[int]
    completion_logprobs: list[float]
    reward: float = 0.0
    advantage: float = 0.0
    is_truncated: bool = False
    example_id: int = 0
    rollout_index: int = 0
    turns: list[int] = field(default_factory=list)
    policy_version: int | None = None

    def __len__(self) -> int:
        return len(self.prompt_ids) + len(self.completion_ids)

    @property
    def input_ids(self) -> list[int]:
        return self.prompt_ids + self.completion_ids

    def mask_all(self) -> None:
        """No loss on any token of this sample."""
        self.completion_mask = [0] * len(self.completion_ids)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def step_tokens(step: Mapping[str, Any], index: int) -> Mapping[str, Any]:
    """The token record of one trajectory step, or a `TrainingDataError` saying how to get it."""
    tokens = step.get("tokens")
    if not tokens or not tokens.get("prompt_ids"):
        raise TrainingDataError(
            f"trajectory step {index} has no prompt token ids: ask the server for them with "
            "sampling args {'logprobs': True, 'extra_body': {'return_token_ids': True}} "
            "(vf.training.TOKEN_SAMPLING_ARGS; vLLM >= 0.10.2)"
        )
    return tokens


def build_samples(
    rollout: Mapping[str, Any],
    *,
    max_seq_len: int | None = None,
    step_versions: Sequence[int | None] | None = None,
) -> list[TrainingSample]:
    """Samples of one rollout (an output record or a `State`), without reward or advantage.

    `step_versions`, parallel to the trajectory, tags each sample with its oldest version."""
    trajectory = rollout.get("trajectory")
    if trajectory is None:
        completion = rollout.get("completion") or ()
        if isinstance(completion, str) or any(m.get("role") == "assistant" for m in completion):
            raise TrainingDataError(
                "the rollout has model turns but no trajectory with token ids: ask the server "
                "for them with sampling args {'logprobs': True, 'extra_body': "
                "{'return_token_ids': True}} (vf.training.TOKEN_SAMPLING_ARGS)"
            )
        trajectory = ()
    example_id = int(rollout.get("example_id") or 0)
    rollout_index = int(
        rollout.get("rollout_index", (rollout.get("input") or {}).get("rollout_index", 0)) or 0
    )
    samples: list[TrainingSample] = []
    current: TrainingSample | None = None
    sequence: list[int] = []  # prompt + completion of `current`, for the extension check
    for i, step in enumerate(trajectory):
        tokens = step_tokens(step, i)
        prompt_ids: list[int] = list(tokens["prompt_ids"])
        completion_ids: list[int] = list(tokens["completion_ids"])
        logprobs = list(tokens.get("completion_logprobs") or [0.0] * len(completion_ids))
        if len(logprobs) != len(completion_ids):
            raise TrainingDataError(
                f"trajectory step {i} has {len(completion_ids)} completion ids but "
                f"{len(logprobs)} logprobs"
            )
        version = step_versions[i] if step_versions is not None else None
        if current is not None and _extends(prompt_ids, sequence):
            bridge = prompt_ids[len(sequence) :]
            current.completion_ids += bridge
            current.completion_mask += [0] * len(bridge)
            current.completion_logprobs += [0.0] * len(bridge)
        else:
            current = TrainingSample(
                prompt_ids=prompt_ids,
                completion_ids=[],
                completion_mask=[],
                completion_logprobs=[],
                example_id=example_id,
                rollout_index=rollout_index,
            )
            samples.append(current)
            sequence = list(prompt_ids)
        current.completion_ids += completion_ids
        current.completion_mask += [1] * len(completion_ids)
        current.completion_logprobs += logprobs
        current.turns.append(i)
        current.is_truncated = current.is_truncated or bool(tokens.get("is_truncated"))
        if version is not None:
            old = current.policy_version
            current.policy_version = version if old is None else min(old, version)
        sequence = prompt_ids + completion_ids
    if max_seq_len is not None:
        for sample in samples:
            truncate(sample, max_seq_len)
    return samples


def _extends(prompt_ids: list[int], sequence: list[int]) -> bool:
    n = len(sequence)
    return len(prompt_ids) >= n and prompt_ids[:n] == sequence


def truncate(sample: TrainingSample, max_seq_len: int) -> None:
    """Cut a sample to `max_seq_len` tokens (completion first) and mark it truncated."""
    if max_seq_len <= 0:
        raise ConfigError(f"max_seq_len must be positive, got {max_seq_len}")
    if len(sample) <= max_seq_len:
        return
    keep = max(0, max_seq_len - len(sample.prompt_ids))
    sample.prompt_ids = sample.prompt_ids[:max_seq_len]
    sample.completion_ids = sample.completion_ids[:keep]
    sample.completion_mask = sample.completion_mask[:keep]
    sample.completion_logprobs = sample.completion_logprobs[:keep]
    sample.is_truncated = True


def is_masked(rollout: Mapping[str, Any]) -> bool:
    """True when a trainer must not learn from this rollout: an infrastructure failure
    (endpoint, sandbox, network), or a reward that could not be computed."""
    error = rollout.get("error")
    if error and error.get("infra"):
        return True
    reward = rollout.get("reward")
    return reward is None or not math.isfinite(reward)


def check_truncation(mode: str) -> Truncation:
    if mode not in TRUNCATION_MODES:
        raise ConfigError(f"truncation must be one of {TRUNCATION_MODES}, got {mode!r}")
    return mode  # type: ignore[return-value]
