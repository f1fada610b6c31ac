"""Model clients: which client a configuration or a user's object becomes (`ClientConfig`,
`resolve_client`), and the public home of the client names.

The pieces live in modules with one job each: `openai_wire` (request pieces, reply parsing),
`openai_http` (the `Client` interface, `OpenAIClient`), `multi_endpoint`
(`MultiEndpointClient`) and `token_in_client` (`TokenInClient`, prime-rl's token route).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from verifiers.errors import ConfigError
from verifiers.multi_endpoint import MultiEndpointClient
from verifiers.openai_http import (
    RETRY_STATUSES,
    Client,
    OpenAIClient,
    OpenAICompletionsClient,
)
from verifiers.openai_http import _refused as _refused  # the retry tests read it here
from verifiers.openai_sdk import is_openai_client
from verifiers.openai_wire import (
    POLICY_VERSION_HEADER,
    ModelResponse,
    ResponseChoice,
    merge_sampling_args,
    model_response,
    parse_chat_completion,
    parse_text_completion,
    to_openai_tool,
)
from verifiers.token_in_client import TokenInClient


@dataclass
class EndpointConfig:
    """One endpoint: a base URL and the name of the environment variable holding its key."""

    api_base_url: str
    api_key_var: str = "OPENAI_API_KEY"
    model: str | None = None
    extra_headers: dict[str, str] = field(default_factory=dict)


# Chat completions is the wire API these clients speak; `openai_chat_completions_token` builds
# `verifiers.training.TokenInClient`s, which send previous turns' exact ids (prime-rl's route),
# and `openai_completions` `OpenAICompletionsClient`s (text completions).
_CLIENT_TYPES = frozenset(
    {"openai_chat_completions", "openai_chat_completions_token", "openai", "openai_completions"}
)


@dataclass
class ClientConfig:
    """Configuration of a model client, optionally spread over several endpoints."""

    api_base_url: str = "https://api.openai.com/v1"
    api_key_var: str = "OPENAI_API_KEY"
    timeout: float = 600.0
    max_retries: int = 5
    extra_headers: dict[str, str] = field(default_factory=dict)
    endpoint_configs: list[EndpointConfig] = field(default_factory=list)
    # upstream's fields (prime-rl builds its clients from them)
    client_idx: int = 0
    client_type: str = "openai_chat_completions"
    connect_timeout: float = 10.0
    max_connections: int = 0  # 0: no limit on the connection pool
    max_keepalive_connections: int = 0  # aiohttp keeps every pooled connection alive
    # header name -> state key (upstream 0.1.12; prime-rl v0.5 passes it, {} by default)
    extra_headers_from_state: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.client_type not in _CLIENT_TYPES:
            raise ConfigError(
                f"client_type {self.client_type!r} is not supported: use one of "
                f"{sorted(_CLIENT_TYPES)}"
            )
        if self.extra_headers_from_state:
            # Upstream reads these per request off the rollout's state (sticky routing at an
            # inference router); our clients do not see the state, so say so instead of
            # dropping them without a word. Requests are still correct, only not pinned.
            import logging

            logging.getLogger("verifiers").warning(
                "ClientConfig.extra_headers_from_state (%s) is not applied: per-request "
                "headers from the rollout state are not supported",
                sorted(self.extra_headers_from_state),
            )

    def build(self, api_key: Callable[[EndpointConfig], str] | None = None) -> Client:
        """The client; `api_key(endpoint)` decides each endpoint's key (default: the value of
        its `api_key_var` here, "EMPTY" when unset). Env servers pass their key policy."""
        key_for = api_key or (lambda e: os.environ.get(e.api_key_var, "EMPTY"))
        endpoints = self.endpoint_configs or [
            EndpointConfig(self.api_base_url, self.api_key_var, extra_headers=self.extra_headers)
        ]
        endpoint_cls: type[OpenAIClient] = OpenAIClient
        if self.client_type == "openai_chat_completions_token":
            endpoint_cls = TokenInClient
        elif self.client_type == "openai_completions":
            endpoint_cls = OpenAICompletionsClient
        clients: list[Client] = [
            endpoint_cls(
                e.api_base_url,
                api_key=key_for(e),
                headers={**self.extra_headers, **e.extra_headers},
                timeout=self.timeout,
                connect_timeout=self.connect_timeout,
                max_connections=self.max_connections,
                max_retries=self.max_retries,
            )
            for e in endpoints
        ]
        return clients[0] if len(clients) == 1 else MultiEndpointClient(clients)


def resolve_client(client: Any) -> tuple[Client, bool]:
    """Return `(client, owned)`: a `Client` for any accepted form; `owned` if built here."""
    if isinstance(client, Client):
        return client, False
    if isinstance(client, ClientConfig):
        return client.build(), True
    if isinstance(client, dict) and ("api_base_url" in client or "endpoint_configs" in client):
        cfg = dict(client)
        cfg["endpoint_configs"] = [
            e if isinstance(e, EndpointConfig) else EndpointConfig(**e)
            for e in cfg.get("endpoint_configs") or []
        ]
        return ClientConfig(**cfg).build(), True
    if isinstance(client, str):
        return OpenAIClient(client), True
    if isinstance(client, (list, tuple)):
        built = [resolve_client(c)[0] for c in client]
        return MultiEndpointClient(built), True
    if is_openai_client(client):
        return OpenAIClient(client), True
    if hasattr(client, "chat"):  # looks like the SDK without being it: call its create()
        from verifiers.clients.sdk_client import SDKSurfaceClient

        return SDKSurfaceClient(client), True
    raise ConfigError(
        f"unsupported client {type(client).__name__}: pass an openai.AsyncOpenAI, a "
        "vf.OpenAIClient, a vf.ClientConfig, or a base URL"
    )


# Names used by the classic API.
OpenAIChatCompletionsClient = OpenAIClient

__all__ = [
    "POLICY_VERSION_HEADER",
    "RETRY_STATUSES",
    "Client",
    "ClientConfig",
    "EndpointConfig",
    "ModelResponse",
    "MultiEndpointClient",
    "OpenAIChatCompletionsClient",
    "OpenAIClient",
    "OpenAICompletionsClient",
    "ResponseChoice",
    "TokenInClient",
    "merge_sampling_args",
    "model_response",
    "parse_chat_completion",
    "parse_text_completion",
    "resolve_client",
    "to_openai_tool",
]
