"""A small in-process cache of rendered anonymous index pages (and file look-ups).

Entries live ``ttl`` seconds; any write through this process clears the cache at once, so a
single process never serves a stale page, and several processes converge within ``ttl``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Page:
    body: bytes
    media_type: str
    etag: str
    status: int = 200


def cache_key(owner: str | None, name: str | None, media_type: str) -> tuple[str, ...]:
    return (owner or "", name or "", media_type)


def page_response(
    page: Page, anonymous: bool, if_none_match: str | None
) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and body for a rendered index page (304 when the ETag matches)."""
    if page.status != 200:
        return page.status, {"Content-Type": "application/json"}, page.body
    headers = {
        "Content-Type": page.media_type,
        "ETag": page.etag,
        "Vary": "Accept, Authorization",
        "Cache-Control": "public, max-age=10" if anonymous else "private, no-cache",
    }
    if if_none_match is not None and if_none_match == page.etag:
        return 304, headers, b""
    return 200, headers, page.body


class IndexCache:
    def __init__(self, ttl: float, max_entries: int = 4096) -> None:
        self.ttl = ttl
        self.max_entries = max_entries
        self._data: dict[tuple[str, ...], tuple[float, Any]] = {}
        self._inflight: dict[tuple[str, ...], asyncio.Future[Page]] = {}

    async def get_or_build(
        self, key: tuple[str, ...], build: Callable[[], Awaitable[Page]]
    ) -> Page:
        """One build per key at a time: concurrent misses wait for the same result."""
        page = self.get(key)
        if page is not None:
            return page
        pending = self._inflight.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        fut: asyncio.Future[Page] = asyncio.get_running_loop().create_future()
        self._inflight[key] = fut
        try:
            page = await build()
        except BaseException as exc:
            fut.set_exception(exc)
            fut.exception()  # mark retrieved: waiters (if any) re-raise it themselves
            raise
        finally:
            self._inflight.pop(key, None)
        self.put(key, page)
        fut.set_result(page)
        return page

    def get(self, key: tuple[str, ...]) -> Any:
        if self.ttl <= 0:
            return None
        hit = self._data.get(key)
        if hit is None:
            return None
        if hit[0] < time.monotonic():
            self._data.pop(key, None)
            return None
        return hit[1]

    def put(self, key: tuple[str, ...], page: Any) -> None:
        if self.ttl <= 0:
            return
        if len(self._data) >= self.max_entries:
            self._data.clear()
        self._data[key] = (time.monotonic() + self.ttl, page)

    def clear(self) -> None:
        self._data.clear()
