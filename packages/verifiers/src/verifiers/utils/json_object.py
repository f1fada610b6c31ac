"""`json_object`: a mapping given either as itself or as the JSON text of an object.

Command-line flags (`--env-args`), dataset columns (`info`, stored as JSON where row schemas
differ) and server settings (`api_keys`) accept both forms; this is the one reading of them,
so each says the same thing about bad input."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from verifiers.errors import ConfigError, Error

__all__ = ["json_object"]


def json_object(
    value: Any, what: str, *, error: type[Error] = ConfigError, expected: str = "a JSON object"
) -> dict[str, Any]:
    """`value` as a dict (a dict is returned as it is; None and "" are empty). JSON that does
    not parse, or anything but an object, raises `error` naming `what` and saying it should be
    `expected`."""
    if isinstance(value, dict):
        return value
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError as e:
            raise error(f"{what} is not valid JSON ({e}): {value[:200]!r}") from None
        if isinstance(value, dict):
            return value
    if not isinstance(value, Mapping):
        raise error(f"{what} must be {expected}, got {type(value).__name__}")
    return dict(value)
