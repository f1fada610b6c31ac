"""Starting an env server process from an orchestrator (what upstream 0.1.12's
`Environment.start_server` and prime-rl v0.5.0's `spawn_env_server` do)."""

from __future__ import annotations

import multiprocessing as mp
import os
from collections.abc import Mapping
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from verifiers.serve.auth import require_auth_beyond_loopback, resolve_secret
from verifiers.serve.credentials import ApiKeyPolicy, ApiKeysSetting
from verifiers.serve.server.zmq_env_server import ZMQEnvServer
from verifiers.serve.wire import get_free_port


def _run_server_with_env(env: Mapping[str, str], *args: Any, **kwargs: Any) -> None:
    # The server's own variables (an environment's keys): in its process and its workers only.
    os.environ.update(env)
    ZMQEnvServer.run_server(*args, **kwargs)


@dataclass
class SpawnedServer:
    address: str
    process: BaseProcess
    death_pipe: Connection  # the writing end: closing it (or dying) stops the server

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM, then SIGKILL after `timeout` seconds; workers exit with their server."""
        self.death_pipe.close()
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(timeout)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout)


def spawn_env_server(
    env_id: str,
    env_args: dict[str, Any] | None = None,
    extra_env_kwargs: dict[str, Any] | None = None,
    address: str | None = None,
    num_workers: int = 1,
    log_level: str | None = None,
    log_dir: str | None = None,
    console_logging: bool = True,
    *,
    env: Mapping[str, str] | None = None,
    secret: str | None = None,
    api_keys: ApiKeysSetting | ApiKeyPolicy = None,
) -> SpawnedServer:
    """Start `ZMQEnvServer.run_server` in a spawned process (never fork: the caller runs an
    event loop and threads). The server stops when this process dies, even by SIGKILL.

    `env`: variables set in the server process and its workers only (the keys its environment
    reads). `secret` (else `$VF_ENV_SERVER_SECRET`) and `api_keys` (else
    `$VF_ENV_SERVER_API_KEYS`) are checked here, so a refused server is an error in the caller."""
    address = address or f"tcp://127.0.0.1:{get_free_port()}"
    secret = resolve_secret(secret)
    require_auth_beyond_loopback(address, secret)
    policy = ApiKeyPolicy.resolve(api_keys)
    reader, writer = mp.Pipe(duplex=False)
    process = mp.get_context("spawn").Process(
        target=_run_server_with_env,
        args=(
            dict(env or {}),
            env_id,
            env_args or {},
            extra_env_kwargs or {},
            log_level,
            log_dir,
            console_logging,
        ),
        kwargs=dict(
            address=address,
            num_workers=num_workers,
            death_pipe=reader,
            secret=secret,
            api_keys=policy.to_setting(),
        ),
        daemon=False,  # it starts worker processes of its own
    )
    process.start()
    reader.close()  # only the server holds the reading end
    return SpawnedServer(address, process, writer)
