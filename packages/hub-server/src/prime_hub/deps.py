"""Request-scoped helpers shared by the route modules."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from fastapi import Request
from starlette.concurrency import run_in_threadpool

from .auth import Principal, token_from_header
from .core.queries import ListingRow
from .listing_cache import mark_cacheable
from .service import Hub


def hub_of(request: Request) -> Hub:
    hub: Hub = request.app.state.hub
    return hub


def base_url(request: Request) -> str:
    configured = hub_of(request).settings.base_url
    return (configured or str(request.base_url)).rstrip("/")


def principal_sync(request: Request) -> Principal:
    """Authenticate in a worker thread (it queries the database)."""
    return hub_of(request).accounts.authenticate(
        token_from_header(request.headers.get("authorization"))
    )


async def principal_async(request: Request) -> Principal:
    if not request.headers.get("authorization"):
        return Principal()
    return await run_in_threadpool(principal_sync, request)


def environment_page(request: Request, **filters: Any) -> tuple[list[ListingRow], int]:
    """The JSON APIs' listings: the environments the caller's API token may see that match
    ``filters`` (``QueryService.listing_rows``' keywords), as page-query rows.
    The response may be served again until the next change (`listing_cache`)."""
    mark_cacheable(request)
    return hub_of(request).queries.listing_rows(principal_sync(request), **filters)


class WorkDir:
    """A temporary directory under the data dir, removed on exit."""

    def __init__(self, hub: Hub) -> None:
        root = hub.settings.data_dir / "tmp"
        root.mkdir(parents=True, exist_ok=True)
        self.path = Path(tempfile.mkdtemp(dir=root))

    def __enter__(self) -> Path:
        return self.path

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
