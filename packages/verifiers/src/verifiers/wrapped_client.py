"""Clients whose model calls go on to other clients.

`Client.get_response` already hands each chat call to `forward`; `ForwardingClient` does the
same with text completions, so a client that passes calls on only says, in `forward(call)`,
which client runs a call and what happens around it (`MultiEndpointClient` picks the next
live endpoint). `WrappedClient` is the common case of one inner client with an optional hook
around each call (version tags, a client built on first use)."""

from __future__ import annotations

from collections.abc import Awaitable

from verifiers.messages import SamplingArgs
from verifiers.openai_http import Client, ModelCall
from verifiers.openai_wire import ModelResponse

__all__ = ["ForwardingClient", "ModelCall", "WrappedClient"]


class ForwardingClient(Client):
    """A client whose chat and text calls both become a `ModelCall` handed to `forward`."""

    async def get_text_response(
        self, prompt: str, model: str, *, sampling_args: SamplingArgs | None = None
    ) -> ModelResponse:
        return await self.forward(
            lambda c: c.get_text_response(prompt, model, sampling_args=sampling_args)
        )


class WrappedClient(ForwardingClient):
    """Forwards each call to `wrapped()` through `around`.

    A subclass sets `inner`, or overrides `wrapped()` to build the client on first use, and
    overrides `around(call)` to act before and after each call (by default it only awaits it).
    Connection checks and closing are the subclass's to forward where it owns the client."""

    inner: Client

    def wrapped(self) -> Client:
        """The client each call goes to: `inner` unless a subclass decides otherwise."""
        return self.inner

    async def around(self, call: Awaitable[ModelResponse]) -> ModelResponse:
        return await call

    async def forward(self, call: ModelCall) -> ModelResponse:
        return await self.around(call(self.wrapped()))
