"""Settings files and tables (`vf-eval` configs, mixtures, Ray placements): reading a TOML file
and refusing fields a table does not know, each with one wording of its `ConfigError`."""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from verifiers.errors import ConfigError

__all__ = ["read_toml", "reject_unknown_fields"]


def read_toml(path: Path, what: str) -> dict[str, Any]:
    """The parsed TOML file at `path`; `what` names it when it is missing ("mixture config")."""
    try:
        return tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"{what} not found: {path}") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path} is not valid TOML: {e}") from None


def reject_unknown_fields(
    given: Iterable[str], valid: Iterable[str], where: str, kind: str = ""
) -> None:
    """Raise naming the fields of `given` that are not `valid` (a misspelt setting is an
    error, not silently ignored). `kind` qualifies them: "pool" -> "unknown pool field(s)"."""
    valid = set(valid)
    unknown = sorted(set(given) - valid)
    if unknown:
        fields = f"{kind} field(s)" if kind else "field(s)"
        raise ConfigError(
            f"{where}: unknown {fields} {', '.join(unknown)}; valid: {', '.join(sorted(valid))}"
        )
