"""EnvClientPool: one environment served by several env servers, as one client.

Each request goes to the healthy server with the fewest requests in flight, so a CPU-heavy
environment scales with the number of server processes (on this host or others). A server
that goes down loses only its own requests (as infra-error records); later requests go to
the others, at once: a dropped connection fails its requests and takes the server out of the
choice until it is back. Ours: upstream 0.1.12 scales only inside one server (`num_workers`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from verifiers.serve.client.env_client import EnvClient
from verifiers.serve.client.zmq_env_client import ZMQEnvClient
from verifiers.serve.types import BaseRequest, HealthRequest, HealthResponse, ServerState


class EnvClientPool(EnvClient):
    def __init__(
        self,
        addresses: Sequence[str] | None = None,
        *,
        clients: Sequence[ZMQEnvClient] | None = None,
        name: str | None = None,
        **client_kwargs: Any,
    ) -> None:
        if clients is None:
            clients = [ZMQEnvClient(a, name=name, **client_kwargs) for a in addresses or ()]
        if not clients:
            raise ValueError("EnvClientPool needs at least one address")
        self.clients = list(clients)
        first = self.clients[0]
        super().__init__(
            ", ".join(c.address for c in self.clients),
            name=name,
            health_check_interval=first.health_check_interval,
            startup_timeout=first.startup_timeout,
            recovery_timeout=first.recovery_timeout,
        )

    def pick(self) -> ZMQEnvClient:
        """The least-busy server that is healthy and connected; a server whose connection
        just dropped (its node died) is skipped before its health checks fail."""
        healthy = [c for c in self.clients if c.server_state is ServerState.HEALTHY]
        connected = [c for c in healthy if c.connected]
        return min(connected or healthy or self.clients, key=lambda c: c.num_pending)

    async def wait_for_server_startup(self, timeout: float | None = None) -> None:  # noqa: ASYNC109
        await asyncio.gather(*(c.wait_for_server_startup(timeout) for c in self.clients))

    async def ensure_server_up(self) -> None:
        if all(c.server_state is ServerState.STARTUP for c in self.clients):
            await self.wait_for_server_startup()

    async def handle_health_request(
        self,
        request: HealthRequest,
        timeout: float | None,  # noqa: ASYNC109
    ) -> HealthResponse:
        answers = [await c.handle_health_request(request, timeout) for c in self.clients]
        if any(a.success for a in answers):
            return HealthResponse(success=True)
        return HealthResponse(success=False, error="; ".join(a.error or "" for a in answers))

    async def send_request(self, request: BaseRequest, timeout: float | None = None) -> Any:  # noqa: ASYNC109
        return await self.pick().send_request(request, timeout)

    async def close(self) -> None:
        await asyncio.gather(*(c.close() for c in self.clients))
