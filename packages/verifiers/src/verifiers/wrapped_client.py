"""`WrappedClient`: a client that passes each model call on to another client, for wrappers
that add one thing around the calls (version tags, a client built on first use) without
restating the `Client` interface."""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Any

from verifiers.openai_http import Client
from verifiers.openai_wire import ModelResponse
from verifiers.types import Messages, SamplingArgs

__all__ = ["WrappedClient"]


class WrappedClient(Client):
    """Forwards `get_response` and `get_text_response` to `wrapped()` through `around`.

    A subclass sets `inner`, or overrides `wrapped()` to build the client on first use, and
    overrides `around(call)` to act before and after each call (by default it only awaits it).
    Connection checks and closing are the subclass's to forward where it owns the client."""

    inner: Client

    def wrapped(self) -> Client:
        """The client each call goes to: `inner` unless a subclass decides otherwise."""
        return self.inner

    async def around(self, call: Awaitable[ModelResponse]) -> ModelResponse:
        return await call

    async def get_response(
        self,
        messages: Messages,
        model: str,
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        sampling_args: SamplingArgs | None = None,
    ) -> ModelResponse:
        inner = self.wrapped()
        return await self.around(
            inner.get_response(messages, model, tools=tools, sampling_args=sampling_args)
        )

    async def get_text_response(
        self, prompt: str, model: str, *, sampling_args: SamplingArgs | None = None
    ) -> ModelResponse:
        inner = self.wrapped()
        return await self.around(
            inner.get_text_response(prompt, model, sampling_args=sampling_args)
        )
