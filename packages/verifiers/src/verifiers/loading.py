"""`load_environment`: find an installed environment by id and build it; `load_mixture`: the\nenvironments a mixture config names, each loaded by id, as one `Mixture`."""

from __future__ import annotations

import difflib
import importlib
import importlib.metadata
import importlib.util
import inspect
import logging
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from verifiers.errors import ConfigError, EnvironmentLoadError, MissingKeyError

if TYPE_CHECKING:
    from verifiers.envs.mixture import Mixture

logger = logging.getLogger("verifiers")

ENTRY_POINT_GROUP = "verifiers.environments"
HUB_INSTALL_VAR = "VF_HUB_INSTALL"  # "0" turns off installing owner/name ids from the hub


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


def _hub_install_allowed() -> bool:
    value = os.environ.get(HUB_INSTALL_VAR, "1").strip().lower()
    return value not in ("0", "false", "no", "off")


def _prime_command() -> list[str] | None:
    """The `prime` CLI: $PRIME_CLI, else beside this interpreter, else on PATH."""
    if explicit := os.environ.get("PRIME_CLI"):
        return shlex.split(explicit)
    beside = Path(sys.executable).parent / "prime"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("prime")
    return [found] if found else None


def _installed_version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _needs_hub_install(env_id: str, module_name: str) -> bool:
    """An `owner/name[@version]` id whose package is missing, or installed at another version."""
    body, _, version = env_id.partition("@")
    if body.count("/") != 1:
        return False
    dist = body.split("/")[1]
    installed = _installed_version(dist)
    if installed is None:
        return (
            importlib.util.find_spec(module_name) is None
            and _entry_point(env_id, module_name) is None
        )
    return bool(version) and installed != version


def install_from_hub(env_id: str) -> None:
    """Install `owner/name[@version]` into this interpreter with `prime env install`, under the
    CLI's rules (the package only from the hub, hash-checked; `verifiers` never from PyPI)."""
    cmd = _prime_command()
    if cmd is None:
        raise EnvironmentLoadError(
            f"{env_id!r} is not installed and the `prime` CLI was not found to install it from "
            f"the hub (install the `prime` package, or set PRIME_CLI)"
        )
    logger.info("installing %s from the hub", env_id)
    proc = subprocess.run(
        [*cmd, "env", "install", env_id, "--python", sys.executable],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        lines = [x for x in proc.stderr.splitlines() if x.strip()] or ["no output"]
        raise EnvironmentLoadError(
            f"installing {env_id!r} from the hub failed: {lines[-1].removeprefix('error: ')}"
        )
    importlib.invalidate_caches()


def _local_folders(root: Path = Path("environments")) -> dict[str, Path]:
    """Environment packages of a local checkout, by folder name: `environments/<name>/` with a
    pyproject.toml, relative to the working directory (where a reader runs vf-eval)."""
    try:
        return {p.parent.name: p.parent for p in sorted(root.glob("*/pyproject.toml"))}
    except OSError:
        return {}


def _not_found(env_id: str, module_name: str) -> str:
    """What was looked for, the closest known ids (installed entry points and local folders),
    and how to install `env_id`: by name from the hub, or from its folder in a checkout."""
    name = env_id.split("/")[-1].split("@")[0].strip()
    dashed = name.replace("_", "-")
    folders = _local_folders()
    installed = {ep.name for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}
    known = sorted((installed | set(folders)) - {dashed})  # a folder of that name is below
    close = difflib.get_close_matches(dashed, known, n=3, cutoff=0.6)
    # environments' folders are named like their dashed ids (environments/i3-math)
    folder = next((folders[f] for f in (name, dashed, module_name) if f in folders), None)
    local = str(folder) if folder is not None else f"environments/{dashed}"
    msg = (
        f"no environment {env_id!r}: looked for an importable module {module_name!r} and an "
        f"entry point named {name!r} in group {ENTRY_POINT_GROUP!r}."
    )
    if close:
        hints = [
            repr(c)
            if c in installed
            else f"{c!r} (not installed: `uv pip install -e {folders[c]}`)"
            for c in close
        ]
        msg += f" Did you mean {' or '.join(hints)}?"
    return msg + (
        f" {'Otherwise, to' if close else 'To'} install {dashed!r}: `prime env install <owner>/{dashed}`, or from a local checkout "
        f"`uv pip install -e {local}`"
    )


def _find_loader(env_id: str) -> Any:
    module_name = environment_module_name(env_id)
    if not module_name.isidentifier():
        raise EnvironmentLoadError(f"{env_id!r} is not a valid environment id")
    if _hub_install_allowed() and _needs_hub_install(env_id, module_name):
        if module_name in sys.modules:
            raise EnvironmentLoadError(
                f"{env_id!r}: another version of {module_name!r} is already imported in this "
                f"process; install it with `prime env install {env_id}` and start again"
            )
        install_from_hub(env_id)
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
            raise EnvironmentLoadError(_not_found(env_id, module_name)) from None
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
    """Import the environment `env_id` and call its `load_environment(**env_args)`.

    An `owner/name[@version]` id that is not installed (or installed at another version) is
    first installed from the hub with the `prime` CLI, unless VF_HUB_INSTALL=0. A path ending
    in `.toml` is a mixture config, loaded with `vf.load_mixture`.
    """
    from verifiers.envs.environment import Environment

    if env_id.endswith(".toml"):  # a mixture config (docs/training.md, "Mixtures")
        return load_mixture(env_id, **env_args)
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


def load_mixture(
    config: str | Path | Mapping[str, Any],
    *,
    seed: int | None = None,
    num_examples: int | None = None,
) -> Mixture:
    """A `Mixture` from a TOML file (or its parsed ``[mixture]`` table): each
    ``[[mixture.env]]`` names an environment (``id``, its ``args``, ``weight``, optional
    ``name`` and ``[mixture.env.pools]``); ``[mixture.pools]`` are defaults for every pool
    spec. ``seed``/``num_examples`` override the file's."""
    # Here, not in envs.mixture: a source may itself be a mixture file, so loading a mixture
    # and loading an id call each other, and one module holds both.
    from verifiers.envs.mixture import Mixture, read_mixture_config

    mixture = read_mixture_config(config)
    sources = mixture.sources
    mix = Mixture(
        [load_environment(s.env_id, **s.args) for s in sources],
        env_names=[s.name for s in sources],
        weights=[s.weight for s in sources],
        pools={s.name: s.pools for s in sources},
        num_examples=num_examples if num_examples is not None else mixture.num_examples,
        seed=seed if seed is not None else mixture.seed,
    )
    mix.env_id = mixture.name
    return mix


def ensure_keys(keys: list[str]) -> None:
    """Raise `MissingKeyError` naming every environment variable in `keys` that is unset."""
    missing = [k for k in keys if not os.environ.get(k)]
    if missing:
        raise MissingKeyError(f"missing environment variables: {', '.join(missing)}")
