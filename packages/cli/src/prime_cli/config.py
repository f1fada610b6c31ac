"""Settings: a JSON file readable only by its owner, overridden by ``PRIME_*`` variables.

File: ``$PRIME_CONFIG_DIR/config.json`` (default ``$XDG_CONFIG_HOME/prime`` or
``~/.config/prime``), mode 0600 in a 0700 directory. Keys: ``hub_url``, ``token``, ``owner``.
Environment: ``PRIME_HUB_URL``, ``PRIME_TOKEN`` (or ``PRIME_API_KEY``), ``PRIME_OWNER``.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .errors import ConfigError

DEFAULT_HUB_URL = "http://127.0.0.1:8000"
KEYS = ("hub_url", "token", "owner")
ENV_VARS = {
    "hub_url": ("PRIME_HUB_URL",),
    "token": ("PRIME_TOKEN", "PRIME_API_KEY"),
    "owner": ("PRIME_OWNER",),
}


def config_dir() -> Path:
    if explicit := os.environ.get("PRIME_CONFIG_DIR"):
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "prime"


def config_path() -> Path:
    return config_dir() / "config.json"


def cache_dir() -> Path:
    if explicit := os.environ.get("PRIME_CACHE_DIR"):
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "prime"


def read_file() -> dict[str, str]:
    path = config_path()
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise ConfigError(f"cannot read {path}: {e}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} is not a JSON object")
    return {k: str(v) for k, v in data.items() if k in KEYS and v is not None}


def write_file(data: dict[str, str]) -> Path:
    """Atomically replace the file; it is created 0600 and never exists with wider rights."""
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path.parent, 0o700)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".config.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump({k: v for k, v in data.items() if v}, f, indent=2, sort_keys=True)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def update_file(**changes: str | None) -> Path:
    data = read_file()
    for key, value in changes.items():
        if key not in KEYS:
            raise ConfigError(f"unknown setting {key!r}; settings are: {', '.join(KEYS)}")
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return write_file(data)


@dataclass(frozen=True)
class Settings:
    hub_url: str
    token: str | None
    owner: str | None
    sources: dict[str, str]  # key -> "env PRIME_X" | "file" | "default"


def load(hub_url: str | None = None, token: str | None = None) -> Settings:
    """Effective settings: explicit arguments, then environment variables, then the file."""
    file = read_file()
    values: dict[str, str | None] = {}
    sources: dict[str, str] = {}
    explicit = {"hub_url": hub_url, "token": token}
    for key in KEYS:
        if explicit.get(key):
            values[key], sources[key] = explicit[key], "option"
            continue
        for var in ENV_VARS[key]:
            if os.environ.get(var):
                values[key], sources[key] = os.environ[var], f"env {var}"
                break
        else:
            if file.get(key):
                values[key], sources[key] = file[key], "file"
            else:
                values[key], sources[key] = None, "default"
    url = (values["hub_url"] or DEFAULT_HUB_URL).rstrip("/")
    if url.endswith("/api/v1"):
        url = url[: -len("/api/v1")]
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"hub URL {url!r} must start with http:// or https://")
    return Settings(hub_url=url, token=values["token"], owner=values["owner"], sources=sources)
