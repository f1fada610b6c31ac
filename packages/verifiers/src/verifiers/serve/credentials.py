"""Which model keys an env server sends, and where: decided by the server, never by a request.

A request's `client_config` names, per endpoint, a base URL and `api_key_var`, the variable
whose value becomes the model client's Bearer token (upstream 0.1.12's and prime-rl's
ClientConfig). Read literally on the server, that lets any client send the server's secrets
(a judge key, a cloud key) to a URL of its choosing. So the server holds an allow-list, and
this is the one place that applies it: a request's endpoint gets the value of the variable it
names only if the server allows that variable for that endpoint. Any other endpoint gets the
key "EMPTY", the value an unset variable always gave: inference servers that need no key
(prime-rl's vLLM) work as before, and a server that needs one answers 401, which the server's
log explains once per variable and endpoint.

The allow-list is `api_keys=` of the server, or else the JSON in `VF_ENV_SERVER_API_KEYS`, read
where the server starts: ``{"OPENAI_API_KEY": ["https://api.openai.com/v1"]}``. An endpoint
matches an allowed URL when scheme, host and port are equal and its path is the allowed path
or below it. Without either setting nothing is allowed.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from verifiers.errors import ConfigError
from verifiers.utils.json_object import json_object

__all__ = ["API_KEYS_VAR", "NO_KEY", "ApiKeyPolicy"]

logger = logging.getLogger("verifiers.serve")

API_KEYS_VAR = "VF_ENV_SERVER_API_KEYS"
NO_KEY = "EMPTY"
_DEFAULT_PORTS = {"http": 80, "https": 443}

ApiKeysSetting = Mapping[str, str | Sequence[str]] | str | None


def _endpoint(url: str) -> tuple[str, str, int, str] | None:
    """(scheme, host, port, path) of an http(s) URL without user info; None otherwise."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname or "@" in parts.netloc:
        return None
    path = parts.path.rstrip("/")
    return scheme, parts.hostname.lower(), port or _DEFAULT_PORTS[scheme], path


def _under(path: str, allowed: str) -> bool:
    return path == allowed or path.startswith(allowed + "/")


@dataclass(frozen=True)
class ApiKeyPolicy:
    """Variable name -> the endpoints (base URLs) its value may be sent to."""

    allowed: tuple[tuple[str, tuple[str, ...]], ...] = ()
    _warned: set[tuple[str, str]] = field(default_factory=set, compare=False, repr=False)

    @classmethod
    def resolve(cls, api_keys: ApiKeysSetting | ApiKeyPolicy = None) -> ApiKeyPolicy:
        """From `api_keys` (a policy, a mapping or its JSON text), else `$VF_ENV_SERVER_API_KEYS`,
        else an empty policy. Malformed settings are a `ConfigError`."""
        if isinstance(api_keys, ApiKeyPolicy):
            return api_keys
        source = "api_keys"
        if api_keys is None:
            api_keys, source = os.environ.get(API_KEYS_VAR) or "{}", API_KEYS_VAR
        mapping = json_object(
            api_keys,
            source,
            expected='a map of variable names to base URLs, e.g. {"OPENAI_API_KEY": '
            '["https://api.openai.com/v1"]}',
        )
        allowed = []
        for var, urls in mapping.items():
            if not isinstance(var, str) or not var:
                raise ConfigError(f"{source}: {var!r} is not a variable name")
            urls = [urls] if isinstance(urls, str) else urls
            if not isinstance(urls, Sequence) or not all(isinstance(u, str) for u in urls):
                raise ConfigError(f"{source}: {var} must map to a base URL or a list of them")
            for url in urls:
                if _endpoint(url) is None:
                    raise ConfigError(
                        f"{source}: {url!r} (for {var}) is not an http(s) base URL without "
                        "user info"
                    )
            allowed.append((var, tuple(urls)))
        return cls(tuple(allowed))

    def allows(self, api_key_var: str, base_url: str) -> bool:
        target = _endpoint(base_url)
        if target is None:
            return False
        for var, urls in self.allowed:
            if var != api_key_var:
                continue
            for url in urls:
                allowed = _endpoint(url)
                if allowed is not None and target[:3] == allowed[:3]:
                    if _under(target[3], allowed[3]):
                        return True
        return False

    def key_for(self, api_key_var: str, base_url: str) -> str:
        """The key sent to `base_url` for a request naming `api_key_var`."""
        value = os.environ.get(api_key_var)
        if value is None:
            return NO_KEY
        if self.allows(api_key_var, base_url):
            return value
        if (api_key_var, base_url) not in self._warned:
            self._warned.add((api_key_var, base_url))
            logger.warning(
                "a request asked for the server's %s as its key for %s; this server does not "
                "allow that (%s or api_keys=), so the endpoint gets no key",
                api_key_var,
                base_url,
                API_KEYS_VAR,
            )
        return NO_KEY

    def build_client(self, client_config: Any) -> Any:
        """The model client for a request's `ClientConfig`, with the keys this policy gives."""
        return client_config.build(api_key=lambda e: self.key_for(e.api_key_var, e.api_base_url))

    def to_setting(self) -> dict[str, list[str]]:
        """As `api_keys=` takes it (to hand the policy to another process)."""
        return {var: list(urls) for var, urls in self.allowed}
