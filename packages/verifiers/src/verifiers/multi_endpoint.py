"""Several endpoints serving one model: `MultiEndpointClient` sends each rollout group to the
next live endpoint in turn and skips endpoints that stopped answering."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import Any

from verifiers.errors import ConfigError, EndpointUnreachableError
from verifiers.openai_http import _OPENAI_SDK_ATTRIBUTES, Client
from verifiers.openai_wire import ModelResponse
from verifiers.wrapped_client import ForwardingClient, ModelCall

logger = logging.getLogger("verifiers.client")


class MultiEndpointClient(ForwardingClient):
    """Several endpoints serving one model; each rollout group goes to the next in turn.

    An endpoint that refuses connections is marked down for `down_seconds` and its requests go
    to the next live one; only when every endpoint is down does a request fail (at once, with
    `EndpointUnreachableError`). After `down_seconds` one request tries it again."""

    def __init__(self, clients: Sequence[Client], *, down_seconds: float = 30.0) -> None:
        if not clients:
            raise ConfigError("MultiEndpointClient needs at least one endpoint")
        self.clients = list(clients)
        self.down_seconds = down_seconds
        self._down_until = [0.0] * len(self.clients)  # time.monotonic() of each one's return
        self._turn = 0  # the next request's first endpoint (ungrouped calls)

    @property
    def base_url(self) -> str:  # type: ignore[override]
        """The first endpoint that is not marked down (what a run's metadata records)."""
        live = self.live()
        return self.clients[live[0] if live else 0].base_url

    def for_group(self, index: int) -> Client:
        return _GroupClient(self, index)

    def __getstate__(self) -> dict[str, Any]:
        # monotonic clocks differ between processes: a copy keeps the time left on each mark
        state = super().__getstate__()
        now = time.monotonic()
        state["_down_until"] = [max(0.0, t - now) for t in self._down_until]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        now = time.monotonic()
        state["_down_until"] = [now + left if left else 0.0 for left in state["_down_until"]]
        self.__dict__.update(state)

    def live(self, start: int = 0) -> list[int]:
        """Indices of the endpoints not marked down, in turn from `start`."""
        now = time.monotonic()
        n = len(self.clients)
        order = [(start + k) % n for k in range(n)]
        return [i for i in order if self._down_until[i] <= now]

    def mark_down(self, index: int, problem: Exception, *, warn: bool = True) -> None:
        now = time.monotonic()
        if warn and self._down_until[index] <= now:  # once per outage, not once per request
            logger.warning(
                "%s; sending its requests to the other endpoints for %gs",
                problem, self.down_seconds,
            )  # fmt: skip
        self._down_until[index] = now + self.down_seconds

    def _all_down(self) -> EndpointUnreachableError:
        urls = ", ".join(c.base_url for c in self.clients)
        return EndpointUnreachableError(f"every endpoint refuses connections ({urls})")

    async def first_live(self, start: int, call: ModelCall) -> ModelResponse:
        """`call`'s reply from the first live endpoint from `start` that accepts the
        connection (each that refuses is marked down)."""
        for i in self.live(start):
            try:
                return await call(self.clients[i])
            except EndpointUnreachableError as e:
                self.mark_down(i, e)
        raise self._all_down()

    async def forward(self, call: ModelCall) -> ModelResponse:
        start, self._turn = self._turn, self._turn + 1
        return await self.first_live(start, call)

    async def check_connection(self) -> list[EndpointUnreachableError]:
        found = await asyncio.gather(
            *(c.check_connection() for c in self.clients), return_exceptions=True
        )
        problems: list[EndpointUnreachableError] = []
        for i, result in enumerate(found):
            if isinstance(result, EndpointUnreachableError):
                self.mark_down(i, result, warn=False)  # returned: the caller reports it
                problems.append(result)
            elif isinstance(result, BaseException):
                raise result
            else:
                problems.extend(result)
        if len(problems) == len(self.clients):
            raise EndpointUnreachableError(
                "no endpoint can be reached: " + "; ".join(map(str, problems))
            )
        return problems

    async def aclose(self) -> None:
        for c in self.clients:
            await c.aclose()


class _GroupClient(ForwardingClient):
    """One rollout group's view of a `MultiEndpointClient`: its own endpoint first, the next
    live one when that refuses connections (so a group's retries can land elsewhere)."""

    def __init__(self, parent: MultiEndpointClient, index: int) -> None:
        self._parent = parent
        self._index = index % len(parent.clients)

    @property
    def _preferred(self) -> Client:
        live = self._parent.live(self._index)
        return self._parent.clients[live[0] if live else self._index]

    @property
    def base_url(self) -> str:  # type: ignore[override]
        return self._preferred.base_url

    def __getattr__(self, name: str) -> Any:
        # classic environments call the OpenAI SDK on the group's client (`.chat.completions`)
        if name not in _OPENAI_SDK_ATTRIBUTES:
            raise AttributeError(name)
        return getattr(self._preferred, name)

    def __repr__(self) -> str:
        return f"<group {self._index} of {len(self._parent.clients)} endpoints>"

    def __getstate__(self) -> dict[str, Any]:
        self.wire_id  # noqa: B018 - fixed before copying, so every copy shares it
        return dict(self.__dict__)

    def rebind(self, known: dict[str, Client]) -> Client:
        # each group has its own view; the endpoints (and their pools) are the parent's
        self._parent = self._parent.rebind(known)  # type: ignore[assignment]
        return self

    async def forward(self, call: ModelCall) -> ModelResponse:
        return await self._parent.first_live(self._index, call)

    async def check_connection(self) -> list[EndpointUnreachableError]:
        return await self._parent.check_connection()
