"""Upstream 0.3's `verifiers.clients`: the provider `Client` interface and the OpenAI clients
under their 0.3 names (all of them this SDK's `OpenAIClient` family)."""

from __future__ import annotations

from typing import Any

from verifiers.client import OpenAIChatCompletionsClient, OpenAICompletionsClient
from verifiers.client import TokenInClient as OpenAIChatCompletionsTokenClient
from verifiers.client import resolve_client as _resolve
from verifiers.clients.client import Client

__all__ = [
    "Client",
    "OpenAIChatCompletionsClient",
    "OpenAIChatCompletionsTokenClient",
    "OpenAICompletionsClient",
    "resolve_client",
]


def resolve_client(client_or_config: Any) -> Any:
    """A client for a client or a `ClientConfig` (its `client_type` picks the class)."""
    return _resolve(client_or_config)[0]
