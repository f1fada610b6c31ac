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
