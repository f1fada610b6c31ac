"""ZMQEnvServer: a ZeroMQ ROUTER socket in front of an EnvServer's worker pool.

`ZMQEnvServer(env_id, env_args, extra_env_kwargs, log_level, log_dir, ..., address=...,
num_workers=...)` and `ZMQEnvServer.run_server(...)` as a process target take upstream
0.1.12's arguments (`serve/server/zmq_env_server.py`). The server process itself only routes:
it answers health probes and forwards requests to its workers, so a CPU-bound environment
never delays a health answer.

Ours: `secret=` (or `$VF_ENV_SERVER_SECRET`) makes the socket CurveZMQ with a ZAP check
(`verifiers.serve.auth`); an address beyond loopback without one is refused before binding.
`api_keys=` (or `$VF_ENV_SERVER_API_KEYS`) is the server's key policy
(`verifiers.serve.credentials`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import zmq
import zmq.asyncio

from verifiers.serve import wire
from verifiers.serve.auth import ServerAuthenticator, require_auth_beyond_loopback, resolve_secret
from verifiers.serve.server.env_server import EnvServer
from verifiers.serve.types import BaseResponse

logger = logging.getLogger("verifiers.serve")


class ZMQEnvServer(EnvServer):
    """A ROUTER socket at `address` in front of the worker pool."""

    def __init__(
        self,
        *args: Any,
        address: str = "tcp://127.0.0.1:5000",
        secret: str | None = None,
        **kwargs: Any,
    ) -> None:
        # decided before anything starts or binds: a refused server leaves nothing behind
        secret = resolve_secret(secret)
        require_auth_beyond_loopback(address, secret)
        super().__init__(*args, **kwargs)
        self.address = address
        self.authenticated = secret is not None
        self.ctx = zmq.asyncio.Context()
        self.authenticator = ServerAuthenticator(self.ctx, secret) if secret else None
        self.frontend = self.ctx.socket(zmq.ROUTER)
        if self.authenticator is not None:
            self.authenticator.secure(self.frontend)
        self.frontend.setsockopt(zmq.ROUTER_MANDATORY, 1)
        self.frontend.setsockopt(zmq.SNDHWM, 0)
        self.frontend.setsockopt(zmq.RCVHWM, 0)
        self.frontend.setsockopt(zmq.LINGER, 0)
        self.frontend.bind(address)

    def health_response(self) -> bytes:
        router = self.router
        if router.ready:
            return wire.encode({"success": True, "error": None})
        if router.startup_error is not None:
            error = {"error": router.startup_error, "error_type": "EnvironmentLoadError"}
        else:
            error = {"error": f"starting: no worker has loaded {self.env_id!r} yet"}
        return wire.encode({"success": False, **error})

    async def send_response(self, client_id: bytes, request_id: bytes, response: bytes) -> None:
        try:
            await self.frontend.send_multipart([client_id, request_id, response])
        except zmq.ZMQError as e:  # the client went away
            logger.debug("could not answer request %s: %s", request_id[:8], e)

    async def serve(self, stop_event: asyncio.Event | None = None) -> None:
        stop = stop_event or asyncio.Event()
        router_task = asyncio.create_task(self.router.run(self.send_response, stop))
        poller = zmq.asyncio.Poller()
        poller.register(self.frontend, zmq.POLLIN)
        logger.info(
            "env server for %s listening on %s%s",
            self.env_id,
            self.address,
            " (CurveZMQ, authenticated)" if self.authenticated else "",
        )
        try:
            while not stop.is_set():
                if router_task.done():
                    router_task.result()  # re-raise what killed the router
                    break
                events = dict(await poller.poll(timeout=100))
                if self.frontend not in events:
                    continue
                frames = await self.frontend.recv_multipart()
                if len(frames) != 3:
                    logger.warning("ignoring a message of %d frames", len(frames))
                    continue
                client_id, request_id, payload = frames
                if payload == wire.HEALTH_PING:
                    await self.send_response(client_id, request_id, self.health_response())
                elif payload == wire.CANCEL:
                    await self.router.forward_cancel(request_id, client_id)
                elif not self.router.workers:
                    failure = BaseResponse(
                        success=False,
                        error=self.router.startup_error or "the env server has no workers",
                        error_type="EnvironmentLoadError",
                    )
                    await self.send_response(
                        client_id, request_id, wire.encode(failure.model_dump())
                    )
                else:
                    await self.router.dispatch_request(client_id, request_id, payload)
        finally:
            stop.set()
            router_task.cancel()
            await asyncio.gather(router_task, return_exceptions=True)

    async def close(self) -> None:
        self.frontend.close()
        if self.authenticator is not None:
            self.authenticator.stop()
        self.ctx.term()
