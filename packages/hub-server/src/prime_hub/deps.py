"""Request-scoped helpers shared by the route modules."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from fastapi import Request
from starlette.concurrency import run_in_threadpool

from .auth import Principal, token_from_header
from .lean_listings import public_base
from .service import Hub


def hub_of(request: Request) -> Hub:
    hub: Hub = request.app.state.hub
    return hub


def base_url(request: Request) -> str:
    return public_base(hub_of(request), request.scope)


def principal_sync(request: Request) -> Principal:
    """Authenticate in a worker thread (it queries the database)."""
    return hub_of(request).accounts.authenticate(
        token_from_header(request.headers.get("authorization"))
    )


async def principal_async(request: Request) -> Principal:
    if not request.headers.get("authorization"):
        return Principal()
    return await run_in_threadpool(principal_sync, request)


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
