"""What a trainer consumes: token-exact samples, a rollout stream, difficulty pools, advantages.

>>> stream = vf.RolloutStream(env, client, model, vf.DifficultyFilter(env.get_dataset()))
>>> async for group in stream:  # doctest: +SKIP
...     train_on(group.samples)
...     await admin.update_weights(step)  # vf.training.InferenceAdmin(urls, stream=stream)
"""

from verifiers.token_in_client import TokenInClient
from verifiers.training.advantages import group_advantages, has_zero_variance
from verifiers.training.difficulty import DifficultyFilter, ProblemStats
from verifiers.training.groups import RolloutGroup, build_group
from verifiers.training.inference_admin import NCCL_READY_MARKER, InferenceAdmin
from verifiers.training.samples import (
    TOKEN_SAMPLING_ARGS,
    TrainingSample,
    build_samples,
    is_masked,
    truncate,
)
from verifiers.training.stream import RolloutStream, VersionTaggingClient

__all__ = [
    "NCCL_READY_MARKER",
    "TOKEN_SAMPLING_ARGS",
    "DifficultyFilter",
    "InferenceAdmin",
    "ProblemStats",
    "RolloutGroup",
    "RolloutStream",
    "TokenInClient",
    "TrainingSample",
    "VersionTaggingClient",
    "build_group",
    "build_samples",
    "group_advantages",
    "has_zero_variance",
    "is_masked",
    "truncate",
]
