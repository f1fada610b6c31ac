"""Client helpers at upstream 0.1.12's path (`verifiers.utils.client_utils`).

prime-rl v0.5 builds raw `AsyncOpenAI` clients from its `vf.ClientConfig`s here (to post to
vLLM's token endpoints for teacher logprobs).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from verifiers.client import ClientConfig


def resolve_client_config(config: ClientConfig) -> ClientConfig:
    """The concrete endpoint of `config`: with `endpoint_configs`, entry `client_idx` (modulo
    their number) with the parent's settings for what it leaves unset."""
    from dataclasses import replace

    if not config.endpoint_configs:
        return replace(config)
    endpoint = config.endpoint_configs[config.client_idx % len(config.endpoint_configs)]
    return replace(
        config,
        api_base_url=endpoint.api_base_url,
        api_key_var=endpoint.api_key_var,
        extra_headers={**config.extra_headers, **endpoint.extra_headers},
        endpoint_configs=[],
    )


def setup_openai_client(config: ClientConfig) -> Any:
    """An `openai.AsyncOpenAI` for `config`'s endpoint: its key from `api_key_var` ("EMPTY"
    when unset), its headers, timeouts, retries and connection limits (0: no limit)."""
    import httpx
    from openai import AsyncOpenAI

    resolved = resolve_client_config(config)
    limits = httpx.Limits(
        max_connections=resolved.max_connections or None,
        max_keepalive_connections=resolved.max_keepalive_connections or None,
    )
    http_client = httpx.AsyncClient(
        limits=limits,
        timeout=httpx.Timeout(resolved.timeout, connect=resolved.connect_timeout),
        headers=dict(resolved.extra_headers),
    )
    return AsyncOpenAI(
        api_key=os.environ.get(resolved.api_key_var) or "EMPTY",
        base_url=resolved.api_base_url,
        max_retries=resolved.max_retries,
        # openai 3 types this as its own httpx fork's client (httpx2); it takes an httpx one
        # (test_prime_rl_replay sends a request through it), and openai 1.x wants httpx's
        http_client=http_client,  # type: ignore[arg-type,unused-ignore]
    )


__all__ = ["resolve_client_config", "setup_openai_client"]
