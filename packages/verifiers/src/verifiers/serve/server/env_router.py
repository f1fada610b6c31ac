"""EnvRouter: the pool of EnvWorker processes behind one env server.

Requests go to the ready worker with the fewest requests in flight (upstream 0.1.12
`serve/server/env_router.py` picks the least-busy worker the same way). A worker that dies
is replaced; unlike upstream, the requests it was running are answered as infra failures
instead of being re-sent, so a rollout that crashes its worker cannot crash the next one too.
A worker that fails to load the environment is not restarted: the server reports the
failure in its health answers.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing as mp
import os
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from multiprocessing.process import BaseProcess

import zmq
import zmq.asyncio

from verifiers.serve import wire
from verifiers.serve.credentials import ApiKeyPolicy
from verifiers.serve.server.env_worker import FAILED, READY, EnvWorker, ServedEnv
from verifiers.serve.types import BaseResponse

logger = logging.getLogger("verifiers.serve")

OnResponse = Callable[[bytes, bytes, bytes], Awaitable[None]]
_CHECK_INTERVAL = 0.25  # seconds between liveness checks of the workers


@dataclass
class WorkerHandle:
    worker_id: int
    process: BaseProcess
    address: str
    socket: zmq.asyncio.Socket
    active_requests: dict[bytes, bytes] = field(default_factory=dict)  # request id -> client id
    ready: bool = False

    @property
    def active_count(self) -> int:
        return len(self.active_requests)


class EnvRouter:
    def __init__(
        self, served: ServedEnv, *, num_workers: int = 1, api_keys: ApiKeyPolicy | None = None
    ) -> None:
        if num_workers < 1:
            raise ValueError(f"num_workers must be at least 1, got {num_workers}")
        self.served = served
        self.env_id = served.env_id
        self.num_workers = num_workers
        self.api_keys = ApiKeyPolicy.resolve(api_keys)
        self.session_id = uuid.uuid4().hex[:12]
        self.ctx = zmq.asyncio.Context()
        self.response_address = wire.make_ipc_address(self.session_id, "responses")
        self.response_pull = self.ctx.socket(zmq.PULL)
        self.response_pull.setsockopt(zmq.RCVHWM, 0)
        self.response_pull.setsockopt(zmq.LINGER, 0)
        self.response_pull.bind(self.response_address)
        self.ipc_paths = [self.response_address.removeprefix("ipc://")]
        self.workers: dict[int, WorkerHandle] = {}
        self.request_to_worker: dict[bytes, int] = {}
        self.startup_error: str | None = None
        self.started = False

    @property
    def ready(self) -> bool:
        """Up once every first worker has loaded the environment (so load is spread from the
        first request on); from then on for as long as the router runs: a restarting worker
        gets its requests queued, it does not make the server look dead."""
        if not self.started:
            self.started = bool(self.workers) and all(w.ready for w in self.workers.values())
        return self.started

    def start_worker(self, worker_id: int) -> WorkerHandle:
        address = wire.make_ipc_address(self.session_id, f"{self.env_id}-{worker_id}")
        if address.removeprefix("ipc://") not in self.ipc_paths:
            self.ipc_paths.append(address.removeprefix("ipc://"))
        # spawn, never fork: the server runs an event loop and ZMQ threads.
        process = mp.get_context("spawn").Process(
            target=EnvWorker.run_worker,
            kwargs=dict(
                **asdict(self.served),
                worker_id=worker_id,
                worker_name=f"{self.env_id}-{worker_id}",
                request_address=address,
                response_address=self.response_address,
                parent_pid=os.getpid(),
                api_keys=self.api_keys,
            ),
            name=f"vf-env-worker-{worker_id}",
            daemon=False,  # environments may start processes of their own
        )
        process.start()
        sock = self.ctx.socket(zmq.PUSH)
        sock.setsockopt(zmq.SNDHWM, 0)
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(address)
        logger.info("started env worker %d (pid %s) on %s", worker_id, process.pid, address)
        return WorkerHandle(worker_id, process, address, sock)

    def start_workers(self) -> None:
        for worker_id in range(self.num_workers):
            self.workers[worker_id] = self.start_worker(worker_id)

    def select_worker(self) -> WorkerHandle:
        ready = [w for w in self.workers.values() if w.ready] or list(self.workers.values())
        return min(ready, key=lambda w: w.active_count)

    async def dispatch_request(self, client_id: bytes, request_id: bytes, payload: bytes) -> None:
        worker = self.select_worker()
        await worker.socket.send_multipart([client_id, request_id, payload])
        worker.active_requests[request_id] = client_id
        self.request_to_worker[request_id] = worker.worker_id

    async def forward_cancel(self, request_id: bytes, client_id: bytes) -> None:
        worker = self.workers.get(self.request_to_worker.get(request_id, -1))
        if worker is not None:
            await worker.socket.send_multipart([client_id, request_id, wire.CANCEL])

    def complete_request(self, request_id: bytes) -> None:
        worker = self.workers.get(self.request_to_worker.pop(request_id, -1))
        if worker is not None:
            worker.active_requests.pop(request_id, None)

    def _control(self, frames: list[bytes]) -> None:
        kind, wid, message = frames[1], int(frames[2]), frames[3].decode(errors="replace")
        worker = self.workers.get(wid)
        if worker is None:
            return
        if kind == READY:
            worker.ready = True
            logger.info("env worker %d loaded %s", wid, self.env_id)
        elif kind == FAILED:
            self.startup_error = f"env worker {wid} could not load {self.env_id!r}: {message}"
            logger.error(self.startup_error)

    async def check_workers(self, on_response: OnResponse) -> None:
        for wid, worker in list(self.workers.items()):
            if worker.process.is_alive():
                continue
            code = worker.process.exitcode
            lost = list(worker.active_requests.items())
            logger.warning(
                "env worker %d (pid %s) exited with code %s; %d request(s) lost",
                wid,
                worker.process.pid,
                code,
                len(lost),
            )
            error = wire.encode(
                BaseResponse(
                    success=False,
                    error=f"env worker {wid} of {self.env_id!r} died (exit code {code}) while "
                    "running this request",
                    error_type="WorkerDiedError",
                    infra=True,
                ).model_dump()
            )
            for rid, client_id in lost:
                self.request_to_worker.pop(rid, None)
                await on_response(client_id, rid, error)
            worker.socket.close()
            if worker.ready or self.startup_error is None:
                self.workers[wid] = self.start_worker(wid)
            else:
                del self.workers[wid]  # it never loaded the environment: do not retry forever

    async def run(self, on_response: OnResponse, stop_event: asyncio.Event) -> None:
        """Start the workers, then forward their responses until `stop_event` is set."""
        self.start_workers()
        poller = zmq.asyncio.Poller()
        poller.register(self.response_pull, zmq.POLLIN)
        last_check = time.monotonic()
        while not stop_event.is_set():
            events = dict(await poller.poll(timeout=int(_CHECK_INTERVAL * 1000)))
            if self.response_pull in events:
                while True:
                    try:
                        frames = await self.response_pull.recv_multipart(zmq.NOBLOCK)
                    except zmq.Again:
                        break
                    if len(frames) == 4 and frames[0] == b"":
                        self._control(frames)
                    elif len(frames) == 3:
                        client_id, request_id, response = frames
                        self.complete_request(request_id)
                        await on_response(client_id, request_id, response)
            if time.monotonic() - last_check >= _CHECK_INTERVAL:
                last_check = time.monotonic()
                await self.check_workers(on_response)

    async def close(self) -> None:
        processes = [w.process for w in self.workers.values()]
        for p in processes:
            if p.is_alive():
                p.terminate()
        deadline = time.monotonic() + 5.0
        for p in processes:
            await asyncio.to_thread(p.join, max(0.0, deadline - time.monotonic()))
            if p.is_alive():
                p.kill()
                await asyncio.to_thread(p.join, 5.0)
        for w in self.workers.values():
            w.socket.close()
        self.workers.clear()
        self.request_to_worker.clear()
        self.response_pull.close()
        self.ctx.term()
        for path in self.ipc_paths:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
