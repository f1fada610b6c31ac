"""EnvWorker: one process that owns one environment and runs the rollouts sent to it.

It pulls ``[client_id, request_id, payload]`` from its server on an IPC socket and pushes
``[client_id, request_id, response]`` back (upstream 0.1.12 `serve/server/env_worker.py`).
Besides responses it pushes control messages of four frames, the first empty (never a client
identity): ``[b"", b"ready", worker_id, b""]`` once the environment is loaded and
``[b"", b"failed", worker_id, message]`` if loading failed, so the server reports a broken
environment to its clients instead of restarting it forever.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zmq
import zmq.asyncio

from verifiers.errors import InfraError
from verifiers.generation import rollout_gc
from verifiers.serve import wire
from verifiers.serve.credentials import ApiKeyPolicy
from verifiers.serve.logs import setup_process_logging
from verifiers.serve.types import (
    BaseResponse,
    RunGroupRequest,
    RunGroupResponse,
    RunRolloutRequest,
    RunRolloutResponse,
)

logger = logging.getLogger("verifiers.serve")

READY = b"ready"
FAILED = b"failed"


@dataclass(frozen=True)
class ServedEnv:
    """What every worker of a server loads, and how the server's processes log: the part of
    the server's (upstream) arguments that its router hands on to each `EnvWorker`. The
    field names are `EnvWorker`'s parameter names."""

    env_id: str
    env_args: dict[str, Any] = field(default_factory=dict)
    extra_env_kwargs: dict[str, Any] = field(default_factory=dict)
    log_level: str | None = None
    log_dir: str | None = None
    console_logging: bool = True


async def run_on_env(
    env: Any,
    group: bool,
    rows: list[dict[str, Any]],
    client: Any,
    model: str,
    sampling_args: dict[str, Any] | None,
    max_retries: int,
    state_columns: list[str] | None,
) -> list[dict[str, Any]]:
    """Roll out and score one input (`group=False`) or one group with the SDK's upstream
    0.1.12 calls, `env.run_rollout` / `env.run_group`: the only place the server calls into
    the environment, so a server runs exactly what the same call runs in process."""
    if not group:
        return [
            await env.run_rollout(
                rows[0], client, model, sampling_args or {}, max_retries, state_columns
            )
        ]
    return list(
        await env.run_group(rows, client, model, sampling_args or {}, max_retries, state_columns)
    )


class EnvWorker:
    """Loads `env_id` and serves rollouts to its server (upstream's constructor arguments)."""

    def __init__(
        self,
        env_id: str,
        env_args: dict[str, Any] | None = None,
        extra_env_kwargs: dict[str, Any] | None = None,
        log_level: str | None = None,
        log_dir: str | None = None,
        console_logging: bool = True,
        *,
        worker_id: int,
        worker_name: str,
        request_address: str,
        response_address: str,
        parent_pid: int | None = None,
        api_keys: ApiKeyPolicy | dict[str, Any] | None = None,
    ) -> None:
        self.env_id = env_id
        # the server's rule for which of its keys a request's endpoints get (credentials.py)
        self.api_keys = ApiKeyPolicy.resolve(api_keys)
        self.env_args = dict(env_args or {})
        self.extra_env_kwargs = dict(extra_env_kwargs or {})
        self.log_level = log_level
        self.log_dir = log_dir
        self.console_logging = console_logging
        self.worker_id = worker_id
        self.worker_name = worker_name
        self.request_address = request_address
        self.response_address = response_address
        self.parent_pid = parent_pid
        self.env: Any = None
        self.clients: dict[bytes, Any] = {}
        self.active_tasks: dict[bytes, asyncio.Task[None]] = {}

    @staticmethod
    def get_log_file(log_dir: str, worker_id: int) -> Path:
        return Path(log_dir) / f"env_worker_{worker_id}.log"

    def load_env(self) -> Any:
        from verifiers.loading import load_environment

        env = load_environment(self.env_id, **self.env_args)
        if self.extra_env_kwargs:
            env.set_kwargs(**self.extra_env_kwargs)
        return env

    def client_for(self, config: dict[str, Any]) -> Any:
        """One model client per distinct configuration, kept for the worker's life; its keys
        are the ones the server's policy gives, never what the request names."""
        key = wire.client_key(config)
        client = self.clients.get(key)
        if client is None:
            client = self.api_keys.build_client(wire.client_config_from_wire(config))
            self.clients[key] = client
        return client

    async def handle(self, payload: bytes) -> BaseResponse:
        raw = wire.decode(payload)
        kind = raw.get("request_type")
        req: RunRolloutRequest | RunGroupRequest
        if kind == "run_rollout":
            rollout = RunRolloutRequest.model_validate(raw)
            req, rows = rollout, [rollout.input]
        elif kind == "run_group":
            group = RunGroupRequest.model_validate(raw)
            req, rows = group, list(group.group_inputs)
        else:
            return BaseResponse(success=False, error=f"unknown request type {kind!r}")
        outputs = await run_on_env(
            self.env,
            kind == "run_group",
            rows,
            self.client_for(req.client_config),
            req.model,
            req.sampling_args,
            req.max_retries,
            req.state_columns,
        )
        packed = [wire.pack_output(o) for o in outputs]
        if kind == "run_rollout":
            return RunRolloutResponse(output=packed[0])
        return RunGroupResponse(outputs=packed)

    async def process(
        self, sock: zmq.asyncio.Socket, client_id: bytes, rid: bytes, payload: bytes
    ) -> None:
        try:
            response = await self.handle(payload)
        except asyncio.CancelledError:
            response = BaseResponse(
                success=False, error="request was cancelled", error_type="CancelledError"
            )
        except Exception as e:
            logger.error("worker %s: request %s failed", self.worker_name, rid[:8], exc_info=True)
            response = BaseResponse(
                success=False,
                error=f"{type(e).__name__}: {e}",
                error_type=type(e).__name__,
                infra=isinstance(e, InfraError),
            )
        try:
            data = wire.encode(response.model_dump(mode="python", warnings=False))
        except Exception as e:
            data = wire.encode(
                BaseResponse(
                    success=False, error=f"response not serialisable: {e}", error_type="TypeError"
                ).model_dump()
            )
        await sock.send_multipart([client_id, rid, data])

    def _forget(self, rid: bytes, _task: asyncio.Task[None]) -> None:
        self.active_tasks.pop(rid, None)

    def _watch_parent(self) -> None:
        # The server may be SIGKILLed; a worker must not outlive it as an orphan. A thread,
        # so a CPU-bound event loop does not delay the check.
        while True:
            time.sleep(0.5)
            if os.getppid() != self.parent_pid:
                os._exit(1)

    async def serve(self) -> None:
        ctx = zmq.asyncio.Context()
        push = ctx.socket(zmq.PUSH)
        push.setsockopt(zmq.SNDHWM, 0)
        push.setsockopt(zmq.LINGER, 2000)
        push.connect(self.response_address)
        wid = str(self.worker_id).encode()
        try:
            self.env = self.load_env()
        except BaseException as e:
            message = f"{type(e).__name__}: {e}"
            logger.error(
                "worker %s failed to load %s:\n%s",
                self.worker_name,
                self.env_id,
                traceback.format_exc(),
            )
            await push.send_multipart([b"", FAILED, wid, message.encode()])
            push.close()
            ctx.term()
            raise
        pull = ctx.socket(zmq.PULL)
        pull.setsockopt(zmq.RCVHWM, 0)
        pull.setsockopt(zmq.LINGER, 0)
        pull.bind(self.request_address)
        await push.send_multipart([b"", READY, wid, b""])
        # The loaded environment lives as long as this process: the rollout collector
        # settings for the whole serving loop (undone on the way out).
        gc_scope = rollout_gc()
        gc_scope.__enter__()
        logger.info(
            "worker %s serving %s on %s", self.worker_name, self.env_id, self.request_address
        )
        try:
            while True:
                frames = await pull.recv_multipart()
                if len(frames) != 3:
                    logger.warning(
                        "worker %s: ignoring a message of %d frames", self.worker_name, len(frames)
                    )
                    continue
                client_id, rid, payload = frames
                if payload == wire.CANCEL:
                    task = self.active_tasks.get(rid)
                    if task is not None:
                        task.cancel()
                    continue
                task = asyncio.create_task(self.process(push, client_id, rid, payload))
                self.active_tasks[rid] = task
                task.add_done_callback(functools.partial(self._forget, rid))
        finally:
            for task in list(self.active_tasks.values()):
                task.cancel()
            await asyncio.gather(*self.active_tasks.values(), return_exceptions=True)
            for client in self.clients.values():
                try:
                    await client.aclose()
                except Exception:
                    pass
            pull.close()
            push.close()
            ctx.term()
            gc_scope.__exit__(None, None, None)

    @classmethod
    def run_worker(cls, *args: Any, **kwargs: Any) -> None:
        """Process entry point (spawned by the server)."""
        worker = cls(*args, **kwargs)
        setup_process_logging(
            worker.log_level,
            str(cls.get_log_file(worker.log_dir, worker.worker_id)) if worker.log_dir else None,
            worker.console_logging,
        )
        if worker.parent_pid is not None:
            threading.Thread(
                target=worker._watch_parent, name="vf-parent-watch", daemon=True
            ).start()
        try:
            asyncio.run(worker.serve())
        except KeyboardInterrupt:
            pass
        except BaseException:
            sys.exit(1)
