"""`load_environment`: find an installed environment by id and build it."""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import logging
import os
from typing import Any

from verifiers.errors import ConfigError, EnvironmentLoadError, MissingKeyError

logger = logging.getLogger("verifiers")

ENTRY_POINT_GROUP = "verifiers.environments"


def environment_module_name(env_id: str) -> str:
    """`owner/my-env@1.0` → `my_env`."""
    name = env_id.split("/")[-1].split("@")[0].strip()
    return name.replace("-", "_").replace(".", "_")


def _entry_point(env_id: str, module_name: str) -> importlib.metadata.EntryPoint | None:
    wanted = {env_id, env_id.split("/")[-1].split("@")[0], module_name}
    wanted |= {w.replace("_", "-") for w in wanted}
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in wanted:
            return ep
    return None


def _find_loader(env_id: str) -> Any:
    module_name = environment_module_name(env_id)
    if not module_name.isidentifier():
        raise EnvironmentLoadError(f"{env_id!r} is not a valid environment id")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name != module_name:
            raise EnvironmentLoadError(
                f"environment {env_id!r} (module {module_name!r}) failed to import: it needs "
                f"the module {e.name!r}, which is not installed"
            ) from e
        ep = _entry_point(env_id, module_name)
        if ep is None:
            raise EnvironmentLoadError(
                f"no environment {env_id!r}: looked for an importable module {module_name!r} "
                f"and an entry point named {env_id!r} in group {ENTRY_POINT_GROUP!r}. Install it "
                f"with `prime env install <owner>/{module_name.replace('_', '-')}` or, from a "
                f"local checkout, `uv pip install -e environments/{module_name}`"
            ) from None
        target = ep.load()
        if inspect.ismodule(target):
            module = target
        elif callable(target):
            return target
        else:
            raise EnvironmentLoadError(
                f"entry point {ep.name!r} ({ep.value}) is neither a module nor a callable"
            ) from None
    loader = getattr(module, "load_environment", None)
    if not callable(loader):
        where = getattr(module, "__file__", None) or "a namespace package"
        raise EnvironmentLoadError(
            f"module {module_name!r} ({where}) has no load_environment() function; if that is "
            f"not your environment, another installed module shadows its name"
        )
    return loader


def load_environment(env_id: str, **env_args: Any) -> Any:
    """Import the environment `env_id` and call its `load_environment(**env_args)`."""
    from verifiers.envs.environment import Environment

    loader = _find_loader(env_id)
    try:
        sig = inspect.signature(loader)
    except (TypeError, ValueError):
        sig = None
    if sig is not None and not any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        unknown = [k for k in env_args if k not in sig.parameters]
        if unknown:
            accepted = [p for p in sig.parameters if not p.startswith("_")]
            raise ConfigError(
                f"environment {env_id!r} does not take {', '.join(map(repr, unknown))}; "
                f"its load_environment accepts: {', '.join(accepted) or 'no arguments'}"
            )
    env = loader(**env_args)
    if not isinstance(env, Environment):
        raise EnvironmentLoadError(
            f"load_environment of {env_id!r} returned {type(env).__name__}, not a vf.Environment"
        )
    env.env_id = env.env_id or env_id
    env.env_args = env.env_args or dict(env_args)
    return env


def ensure_keys(keys: list[str]) -> None:
    """Raise `MissingKeyError` naming every environment variable in `keys` that is unset."""
    missing = [k for k in keys if not os.environ.get(k)]
    if missing:
        raise MissingKeyError(f"missing environment variables: {', '.join(missing)}")
