"""EnvServer: an environment in a pool of worker processes, and the server's lifecycle.

The constructor takes upstream 0.1.12's arguments (`serve/server/env_server.py`) as prime-rl
v0.5.0's orchestrator passes them, `run()` serves until SIGTERM/SIGINT and `run_server(...)`
is the process entry point. Subclasses add the client-facing transport (`ZMQEnvServer`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import threading
from abc import ABC, abstractmethod
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from verifiers.serve.credentials import ApiKeyPolicy, ApiKeysSetting
from verifiers.serve.logs import setup_process_logging
from verifiers.serve.server.env_router import EnvRouter
from verifiers.serve.server.env_worker import EnvWorker, ServedEnv

logger = logging.getLogger("verifiers.serve")


class EnvServer(ABC):
    """An environment served from a pool of worker processes; subclasses add the transport."""

    def __init__(
        self,
        env_id: str,
        env_args: dict[str, Any] | None = None,
        extra_env_kwargs: dict[str, Any] | None = None,
        log_level: str | None = None,
        log_dir: str | None = None,
        console_logging: bool = True,
        file_logging: bool = True,
        json_logging: bool = False,
        *,
        num_workers: int = 1,
        death_pipe: Connection | None = None,
        api_keys: ApiKeysSetting | ApiKeyPolicy = None,
        **_ignored: Any,  # upstream's tuning knobs (heartbeat timeout, stats interval)
    ) -> None:
        self.env_id = env_id
        self.log_level = log_level
        self.log_dir = log_dir
        self.console_logging = console_logging
        self.file_logging = file_logging and log_dir is not None
        self.json_logging = json_logging
        self.death_pipe = death_pipe
        self.router = EnvRouter(
            ServedEnv(
                env_id,
                dict(env_args or {}),
                dict(extra_env_kwargs or {}),
                log_level,
                log_dir,
                console_logging,
            ),
            num_workers=num_workers,
            api_keys=ApiKeyPolicy.resolve(api_keys),
        )

    @staticmethod
    def get_log_file(log_dir: str) -> Path:
        return Path(log_dir) / "env_server.log"

    @staticmethod
    def get_all_log_files(log_dir: str, num_workers: int) -> list[Path]:
        """The server's log file, then each worker's (upstream 0.1.12's layout)."""
        workers = [EnvWorker.get_log_file(log_dir, i) for i in range(num_workers)]
        return [EnvServer.get_log_file(log_dir), *workers]

    @abstractmethod
    async def serve(self, stop_event: asyncio.Event | None = None) -> None: ...

    @abstractmethod
    async def close(self) -> None: ...

    def _watch_death_pipe(self) -> None:
        # The parent holds the writing end; EOF means it died (even by SIGKILL).
        assert self.death_pipe is not None
        try:
            self.death_pipe.recv()
        except (EOFError, OSError):
            pass
        os.kill(os.getpid(), signal.SIGTERM)

    async def run(self) -> None:
        """Serve until SIGTERM/SIGINT (the handlers are removed again on the way out)."""
        stop_event = asyncio.Event()
        loop = asyncio.get_running_loop()
        installed = []
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, stop_event.set)
                installed.append(sig)
        if self.death_pipe is not None:
            threading.Thread(target=self._watch_death_pipe, daemon=True).start()
        try:
            await self.serve(stop_event=stop_event)
        finally:
            try:
                await self.router.close()
                await self.close()
            finally:
                for sig in installed:
                    loop.remove_signal_handler(sig)

    @classmethod
    def run_server(cls, *args: Any, **kwargs: Any) -> None:
        """Process entry point: `mp.get_context("spawn").Process(target=ZMQEnvServer.run_server,
        args=(env_id, env_args, extra_env_kwargs, log_level, log_dir), kwargs=...)`."""
        server = cls(*args, **kwargs)
        setup_process_logging(
            server.log_level,
            str(cls.get_log_file(server.log_dir))
            if server.file_logging and server.log_dir
            else None,
            server.console_logging,
            server.json_logging,
        )
        asyncio.run(server.run())
