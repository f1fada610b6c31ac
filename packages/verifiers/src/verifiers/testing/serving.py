"""Serving a test server: on the running event loop (`LoopSite`), or from a background thread
with its own loop (`BackgroundLoop`), for tests that are not async."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable

from aiohttp import web

__all__ = ["BackgroundLoop", "LoopSite"]


class LoopSite:
    """A low-level aiohttp server for `handler` on host:port (port 0: any free one)."""

    def __init__(self, handler: Callable[[web.BaseRequest], Awaitable[web.StreamResponse]]):
        self.handler = handler
        self._runner: web.ServerRunner | None = None

    async def start(self, host: str, port: int) -> int:
        """Listen; returns the port."""
        server = web.Server(self.handler, handler_cancellation=True, access_log=None)
        self._runner = web.ServerRunner(server, shutdown_timeout=0.25)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port, backlog=4096)
        await site.start()
        return int(self._runner.addresses[0][1])

    async def stop(self) -> None:
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()


class BackgroundLoop:
    """A daemon thread running its own event loop: `start(astart, astop)` runs `astart()` there
    and returns once it finished (raising what it raised); `stop()` runs `astop()` and ends it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None

    def start(
        self, astart: Callable[[], Awaitable[object]], astop: Callable[[], Awaitable[None]]
    ) -> None:
        if self._thread is not None:
            return
        ready = threading.Event()
        error: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(astart())
            except BaseException as e:
                error.append(e)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(astop())
                loop.close()

        self._thread = threading.Thread(target=run, name=self.name, daemon=True)
        self._thread.start()
        ready.wait()
        if error:
            self._thread = None
            raise error[0]

    def stop(self) -> None:
        thread, loop = self._thread, self._loop
        if thread is None or loop is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        self._thread = None
        self._loop = None
