"""A small in-process cache of rendered anonymous index pages.

Entries live ``ttl`` seconds; any write through this process clears the cache at once, so a
single process never serves a stale page, and several processes converge within ``ttl``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Page:
    body: bytes
    media_type: str
    etag: str
    status: int = 200


class IndexCache:
    def __init__(self, ttl: float, max_entries: int = 4096) -> None:
        self.ttl = ttl
        self.max_entries = max_entries
        self._data: dict[tuple[str, ...], tuple[float, Page]] = {}

    def get(self, key: tuple[str, ...]) -> Page | None:
        if self.ttl <= 0:
            return None
        hit = self._data.get(key)
        if hit is None:
            return None
        if hit[0] < time.monotonic():
            self._data.pop(key, None)
            return None
        return hit[1]

    def put(self, key: tuple[str, ...], page: Page) -> None:
        if self.ttl <= 0:
            return
        if len(self._data) >= self.max_entries:
            self._data.clear()
        self._data[key] = (time.monotonic() + self.ttl, page)

    def clear(self) -> None:
        self._data.clear()
