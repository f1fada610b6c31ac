"""Request-scoped helpers shared by the route modules."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from fastapi import Request, UploadFile
from starlette.concurrency import run_in_threadpool

from .auth import Principal, token_from_header
from .db.models import Environment, Version
from .errors import TooLarge
from .service import Hub


def hub_of(request: Request) -> Hub:
    return request.app.state.hub


def base_url(request: Request) -> str:
    configured = hub_of(request).settings.base_url
    return (configured or str(request.base_url)).rstrip("/")


def principal_sync(request: Request) -> Principal:
    """Authenticate in a worker thread (it queries the database)."""
    return hub_of(request).authenticate(token_from_header(request.headers.get("authorization")))


async def principal_async(request: Request) -> Principal:
    if not request.headers.get("authorization"):
        return Principal()
    return await run_in_threadpool(principal_sync, request)


def environment_page(
    request: Request, **filters: Any
) -> tuple[list[tuple[Environment, Version | None]], int]:
    """The JSON APIs' listings: the environments the caller's API token may see that match
    ``filters`` (``Hub.list_environments``' keywords), each with its latest version."""
    return hub_of(request).list_environments_with_latest(principal_sync(request), **filters)


def check_content_length(request: Request) -> None:
    limit = hub_of(request).settings.max_upload_bytes
    length = request.headers.get("content-length")
    if length and length.isdigit() and int(length) > 2 * limit + 1024 * 1024:
        raise TooLarge(
            f"request body of {length} bytes exceeds the upload limit ({limit} per file)"
        )


def spool_upload(upload: UploadFile, workdir: Path, limit: int) -> Path:
    """Copy an uploaded form file to disk, refusing it past ``limit`` bytes."""
    dest = workdir / f"{len(list(workdir.iterdir()))}.bin"
    written = 0
    upload.file.seek(0)
    with open(dest, "wb") as out:
        while chunk := upload.file.read(1024 * 1024):
            written += len(chunk)
            if written > limit:
                raise TooLarge(
                    f"{upload.filename} is larger than the upload limit of {limit} bytes"
                )
            out.write(chunk)
    return dest


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
