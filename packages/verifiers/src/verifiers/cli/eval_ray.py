"""How `vf-eval` builds the environment it runs: in this process, or (`--ray`) as a
`verifiers.ray.RayEnvironment` whose worker actors each build the same configured environment."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from verifiers.cli.eval_settings import EvalSettings
    from verifiers.envs.environment import Environment


def configured_environment(
    env_id: str,
    env_args: dict[str, Any],
    extra_env_kwargs: dict[str, Any],
    timeout: float | None,
) -> Environment:
    """`load_environment` plus vf-eval's `-x` kwargs and `--timeout`. A module-level function,
    so that Ray can send it (by reference) to the actors that build the environment."""
    from verifiers.loading import load_environment

    env = load_environment(env_id, **env_args)
    if extra_env_kwargs:
        env.set_kwargs(**extra_env_kwargs)
    if timeout is not None:  # wins over a timeout_seconds in the extra kwargs, as upstream
        env.timeout_seconds = timeout
    return env


def load_configured(s: EvalSettings) -> Environment:
    return configured_environment(s.env_id, s.env_args, s.extra_env_kwargs, s.timeout)


def ray_environment(s: EvalSettings) -> Any:
    """The evaluation's environment on the cluster at `--ray` (connects; an unreachable head
    raises `ClusterUnreachableError` here, before any rollout)."""
    from verifiers.ray import RayEnvironment

    assert s.ray is not None
    factory = functools.partial(
        configured_environment, s.env_id, s.env_args, s.extra_env_kwargs, s.timeout
    )
    return RayEnvironment(
        factory=factory,
        workers_per_node=s.ray.workers_per_node,
        resources=s.ray.resources,
        env_vars=s.ray.env_vars,
        retry_lost_groups=s.ray.retry_lost,
        address=s.ray.address,
    )


def ray_summary_fields(env: Any) -> dict[str, Any]:
    """What the run's metadata records of the cluster: the actors placed (starting or ready,
    not lost) and their nodes."""
    workers = [w for w in env.workers() if not w.dead]
    return {"workers": len(workers), "nodes": len({w.node_id for w in workers})}


def ray_summary(env: Any) -> str:
    fields = ray_summary_fields(env)
    return f"{fields['workers']} worker actors on {fields['nodes']} nodes"
