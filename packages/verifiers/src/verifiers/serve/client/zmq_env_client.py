"""ZMQEnvClient: a DEALER socket to one env server, with a health checker on its own thread.

As upstream 0.1.12 (`serve/client/zmq_env_client.py`): requests are multiplexed over one
DEALER socket, matched to answers by request id; a thread probes the server with ``b"ping"``
every `health_check_interval` seconds on a socket of its own (so a busy event loop cannot
make a live server look dead), and after `max_failed_health_checks` failed probes in a row a
server that was healthy is marked unhealthy and every request in flight on it fails. Here
those requests become infra-error records (see `verifiers.serve.client`) at once rather than
waiting up to `recovery_timeout` for the server to return; later requests do wait for it.

Ours besides: a monitor on the socket fails the requests in flight as soon as the connection
to the server drops (a server that reconnects cannot answer them: its socket no longer knows
this client), so a dead server or node costs no health-check wait; `connected` tells an
`EnvClientPool` to send elsewhere meanwhile. `secret=` (or `$VF_ENV_SERVER_SECRET`) makes
the client authenticate with CurveZMQ (`verifiers.serve.auth`); a failed handshake is named
in the startup error.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
import uuid
from typing import Any

import zmq
import zmq.asyncio
from zmq.utils.monitor import parse_monitor_message

from verifiers.serve import wire
from verifiers.serve.auth import (
    HANDSHAKE_FAILED,
    describe_handshake_failure,
    resolve_secret,
    secure_client_socket,
)
from verifiers.serve.client.env_client import EnvClient
from verifiers.serve.types import (
    BaseRequest,
    HealthRequest,
    HealthResponse,
    PendingRequest,
    ServerError,
    ServerState,
    ServerTimeoutError,
)


class ZMQEnvClient(EnvClient):
    DEFAULT_REQUEST_TIMEOUT = 36_000.0  # 10h, upstream's default

    def __init__(
        self,
        address: str = "tcp://127.0.0.1:5000",
        *,
        health_check_timeout: float | None = None,
        max_failed_health_checks: int = 5,
        secret: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(address=address, **kwargs)
        self.secret = resolve_secret(secret)
        # upstream: probe timeout max(interval, 2s), unhealthy after 5 failed probes
        self.health_check_timeout = (
            health_check_timeout
            if health_check_timeout is not None
            else max(self.health_check_interval, 2.0)
        )
        self.max_failed_health_checks = max_failed_health_checks
        self.ctx = zmq.asyncio.Context()
        self.socket = self.ctx.socket(zmq.DEALER)
        self.socket.setsockopt(zmq.SNDHWM, 0)
        self.socket.setsockopt(zmq.RCVHWM, 0)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.setsockopt(zmq.TCP_KEEPALIVE, 1)
        self.socket.setsockopt(zmq.TCP_KEEPALIVE_IDLE, 10)
        self.socket.setsockopt(zmq.TCP_KEEPALIVE_INTVL, 2)
        self.socket.setsockopt(zmq.TCP_KEEPALIVE_CNT, 3)
        secure_client_socket(self.socket, self.secret)
        self.monitor: zmq.asyncio.Socket | None = None
        self.monitor_task: asyncio.Task[None] | None = None
        self.connected = False  # a completed handshake, and no disconnect since
        self.handshake_error: str | None = None
        self.pending_requests: dict[str, PendingRequest] = {}
        self.server_state = ServerState.STARTUP
        self.startup_error: str | None = None
        self.receiver_task: asyncio.Task[None] | None = None
        self.health_thread: threading.Thread | None = None
        self.stop_health_thread = threading.Event()
        self.loop: asyncio.AbstractEventLoop | None = None
        self._healthy: asyncio.Event | None = None
        self._settled: asyncio.Event | None = None  # startup ended: healthy or failed
        self._closed = False

    # -- lifecycle --------------------------------------------------------------------------
    async def ensure_started(self) -> None:
        if self._closed:
            raise ServerError(f"the client of env server {self.name} is closed")
        if self.receiver_task is None:
            self.loop = asyncio.get_running_loop()
            self._healthy = asyncio.Event()
            self._settled = asyncio.Event()
            self.monitor = self.socket.get_monitor_socket(
                zmq.EVENT_HANDSHAKE_SUCCEEDED | zmq.EVENT_DISCONNECTED | HANDSHAKE_FAILED
            )
            self.monitor_task = asyncio.create_task(self.monitor_loop())
            self.socket.connect(self.address)
            self.receiver_task = asyncio.create_task(self.receive_loop())
            self.health_thread = threading.Thread(
                target=self.run_health_check_thread, name="vf-env-health", daemon=True
            )
            self.health_thread.start()

    async def wait_for_server_startup(self, timeout: float | None = None) -> None:  # noqa: ASYNC109
        """Wait until the server answers health probes; `ServerTimeoutError` after `timeout`
        (default `startup_timeout`), `ServerError` at once if its environment failed to load."""
        timeout = self.startup_timeout if timeout is None else timeout
        await self.ensure_started()
        assert self._settled is not None
        try:
            await asyncio.wait_for(self._settled.wait(), timeout=timeout)
        except TimeoutError:
            why = self.handshake_error or "is it running at that address?"
            raise ServerTimeoutError(
                f"env server {self.name} did not come up within {timeout:g}s (no healthy "
                f"answer to its health probes; {why})"
            ) from None
        if self.startup_error is not None:
            raise ServerError(f"env server {self.name} cannot serve: {self.startup_error}")

    async def ensure_server_up(self) -> None:
        if self.server_state is ServerState.STARTUP:
            await self.wait_for_server_startup()

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.stop_health_thread.set()
        if self.health_thread is not None:
            await asyncio.to_thread(self.health_thread.join, 5.0)
        tasks = [t for t in (self.receiver_task, self.monitor_task) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self.monitor is not None:
            self.socket.disable_monitor()
            self.monitor.close()
        for pending in list(self.pending_requests.values()):
            if not pending.future.done():
                pending.future.cancel()
        self.pending_requests.clear()
        self.socket.close()
        self.ctx.term()

    # -- requests ---------------------------------------------------------------------------
    async def handle_health_request(
        self,
        request: HealthRequest,
        timeout: float | None,  # noqa: ASYNC109
    ) -> HealthResponse:
        if self.server_state is ServerState.HEALTHY:
            return HealthResponse(success=True)
        return HealthResponse(success=False, error=f"server state: {self.server_state.value}")

    @property
    def num_pending(self) -> int:
        return len(self.pending_requests)

    async def send_request(self, request: BaseRequest, timeout: float | None = None) -> Any:  # noqa: ASYNC109
        """Send `request`, return the server's decoded answer. Raises `ServerError` when the
        server goes down while it runs and `ServerTimeoutError` when it takes longer than
        `timeout` or stays down longer than `recovery_timeout`."""
        await self.ensure_started()
        assert self._healthy is not None
        if self.server_state is ServerState.UNHEALTHY:
            try:
                await asyncio.wait_for(self._healthy.wait(), timeout=self.recovery_timeout)
            except TimeoutError:
                raise ServerTimeoutError(
                    f"env server {self.name} did not recover within {self.recovery_timeout:g}s"
                ) from None
        timeout = self.DEFAULT_REQUEST_TIMEOUT if timeout is None else timeout
        payload = wire.encode(request.model_dump(mode="python", warnings=False))
        request_id = uuid.uuid4().hex
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending_requests[request_id] = PendingRequest(
            request_id, request, future, time.time(), timeout
        )
        try:
            await self.socket.send_multipart([request_id.encode(), payload])
            return await asyncio.wait_for(future, timeout=timeout)
        except TimeoutError:
            await self.send_cancel(request_id)
            raise ServerTimeoutError(
                f"env server {self.name} did not answer a {request.request_type} request "
                f"within {timeout:g}s"
            ) from None
        except (asyncio.CancelledError, ServerError):
            await self.send_cancel(request_id)  # stop the rollout on the server too
            raise
        finally:
            self.pending_requests.pop(request_id, None)

    async def send_cancel(self, request_id: str) -> None:
        if self._closed:
            return
        try:
            await self.socket.send_multipart([request_id.encode(), wire.CANCEL], zmq.NOBLOCK)
        except zmq.ZMQError:
            pass  # best effort

    async def receive_loop(self) -> None:
        # No timeout around recv: cancelling a recv in flight can drop a message
        # (verifiers#921); the loop is cancelled only on close.
        while True:
            try:
                frames = await self.socket.recv_multipart()
            except asyncio.CancelledError:
                return
            except zmq.ZMQError as e:
                self.fail_pending(ServerError(f"socket error on env server {self.name}: {e}"))
                return
            if len(frames) != 2:
                continue
            pending = self.pending_requests.get(frames[0].decode())
            if pending is None or pending.future.done():
                continue  # answered after it timed out, failed or was cancelled
            try:
                pending.future.set_result(wire.decode(frames[1]))
            except Exception as e:
                pending.future.set_exception(ServerError(f"undecodable answer: {e}"))

    async def monitor_loop(self) -> None:
        assert self.monitor is not None
        while True:
            try:
                event = parse_monitor_message(await self.monitor.recv_multipart())
            except asyncio.CancelledError:
                return
            except zmq.ZMQError:
                return
            kind = event["event"]
            if kind == zmq.EVENT_HANDSHAKE_SUCCEEDED:
                self.connected, self.handshake_error = True, None
            elif kind & HANDSHAKE_FAILED:
                self.handshake_error = describe_handshake_failure(kind, self.secret)
                self.logger.warning("env server %s: %s", self.name, self.handshake_error)
            elif kind == zmq.EVENT_DISCONNECTED and self.connected:
                self.connected = False
                if self.num_pending:
                    message = f"lost the connection to env server {self.name}"
                    self.logger.warning(
                        "%s; failing %d request(s) in flight", message, self.num_pending
                    )
                    self.fail_pending(ServerError(message))

    def fail_pending(self, exc: ServerError) -> None:
        for pending in list(self.pending_requests.values()):
            if not pending.future.done():
                pending.future.set_exception(exc)

    # -- health -----------------------------------------------------------------------------
    def run_health_check_thread(self) -> None:
        ctx = zmq.Context()
        timeout_ms = max(1, int(self.health_check_timeout * 1000))
        ids = itertools.count()

        def new_socket() -> zmq.Socket:
            sock = ctx.socket(zmq.DEALER)
            sock.setsockopt(zmq.LINGER, 0)
            sock.setsockopt(zmq.SNDTIMEO, timeout_ms)
            sock.setsockopt(zmq.RCVTIMEO, timeout_ms)
            secure_client_socket(sock, self.secret)
            sock.connect(self.address)
            return sock

        sock = new_socket()
        failed = 0
        state = ServerState.STARTUP
        try:
            while not self.stop_health_thread.is_set():
                answer: dict[str, Any] | None = None
                probe = str(next(ids)).encode()
                try:
                    sock.send_multipart([probe, wire.HEALTH_PING])
                    frames = sock.recv_multipart()
                    if len(frames) == 2 and frames[0] == probe:
                        answer = wire.decode(frames[1])
                except zmq.ZMQError:
                    # a late answer must not be taken for the next probe's: start afresh
                    sock.close()
                    sock = new_socket()
                if answer is not None and answer.get("success"):
                    failed = 0
                    if state is not ServerState.HEALTHY:
                        state = ServerState.HEALTHY
                        self._post(self.on_became_healthy)
                else:
                    failed += 1
                    if (
                        state is ServerState.STARTUP
                        and answer is not None
                        and answer.get("error_type") == "EnvironmentLoadError"
                    ):
                        self._post(self.on_startup_failed, str(answer.get("error")))
                    if state is ServerState.HEALTHY and failed >= self.max_failed_health_checks:
                        state = ServerState.UNHEALTHY
                        self._post(self.on_became_unhealthy, failed)
                self.stop_health_thread.wait(self.health_check_interval)
        finally:
            sock.close()
            ctx.term()

    def _post(self, fn: Any, *args: Any) -> None:
        assert self.loop is not None
        try:
            self.loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:  # the loop is closed
            self.stop_health_thread.set()

    def on_became_healthy(self) -> None:
        was = self.server_state
        self.server_state = ServerState.HEALTHY
        assert self._healthy is not None and self._settled is not None
        self._healthy.set()
        self._settled.set()
        self.logger.info("env server %s is healthy (was %s)", self.name, was.value)

    def on_startup_failed(self, error: str) -> None:
        assert self._settled is not None
        self.startup_error = error
        self._settled.set()

    def on_became_unhealthy(self, failed_checks: int) -> None:
        self.server_state = ServerState.UNHEALTHY
        assert self._healthy is not None
        self._healthy.clear()
        message = (
            f"env server {self.name} stopped answering ({failed_checks} health checks failed "
            "in a row)"
        )
        self.logger.warning("%s; failing %d request(s) in flight", message, self.num_pending)
        self.fail_pending(ServerError(message))
