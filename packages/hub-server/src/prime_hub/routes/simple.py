"""The simple repository API (global and per owner) and file downloads."""

from __future__ import annotations

import hashlib
import json
from functools import partial

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import (
    FileResponse,
    JSONResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from packaging.version import Version as PkgVersion
from starlette.concurrency import run_in_threadpool

from .. import simple
from ..auth import Principal
from ..deps import hub_of, principal_async
from ..errors import Conflict, NotFound
from ..index_cache import IndexCache, Page, cache_key, page_response
from ..index_routing import Upstream, route
from ..names import normalize
from ..service import DownloadInfo, Hub
from ..storage import LocalStorage

router = APIRouter(tags=["simple"])


def _file_url(owner: str, name: str, filename: str) -> str:
    return f"/files/{owner}/{normalize(name)}/{filename}"


def _project_page(
    hub: Hub, principal: Principal, owner: str | None, name: str, fmt: str, media_type: str
) -> Page:
    answer = route(hub, principal, owner, name)
    if isinstance(answer, Upstream):
        return Page(b"", media_type, "", 302, location=answer.url)
    data = hub.queries.index_data(principal, answer.owner, name)
    order = {v: PkgVersion(v) for v in {r.version for r in data.rows}}
    rows = sorted(data.rows, key=lambda r: (order[r.version], r.filename))  # oldest first
    files = [
        simple.IndexFile(
            filename=r.filename,
            url=_file_url(data.owner, data.name, r.filename),
            sha256=r.sha256,
            size=r.size,
            upload_time=r.uploaded_at,
            requires_python=r.requires_python,
            metadata_sha256=r.metadata_sha256,
            yanked=r.yanked,
            yanked_reason=r.yanked_reason,
        )
        for r in rows
        if r.kind != "source"  # prime CLI source trees are not installable sdists
    ]
    if fmt == "json":
        versions = sorted(order, key=order.__getitem__)
        pass_through = hub.settings.upstream is not None
        body = simple.project_page_json(data.normalized_name, versions, files, pass_through)
    else:
        body = simple.project_page_html(data.normalized_name, files)
    return Page(body, media_type, _etag(body))


def _root_page(
    hub: Hub, principal: Principal, owner: str | None, fmt: str, media_type: str
) -> Page:
    names = hub.queries.index_projects(principal, owner)
    prefix = f"/{owner}/simple/" if owner else "/simple/"
    body = (
        simple.root_page_json([normalize(n) for n in names], hub.settings.upstream is not None)
        if fmt == "json"
        else simple.root_page_html([normalize(n) for n in names], prefix)
    )
    return Page(body, media_type, _etag(body))


def _etag(body: bytes) -> str:
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


async def _serve(request: Request, owner: str | None, name: str | None) -> Response:
    chosen = simple.negotiate(request.headers.get("accept"), request.query_params.get("format"))
    if chosen is None:
        return JSONResponse(
            {"detail": f"not acceptable; offered: {simple.JSON_TYPE}, {simple.HTML_TYPE}"},
            status_code=406,
        )
    fmt, media_type = chosen
    hub = hub_of(request)
    anonymous = not request.headers.get("authorization")
    key = cache_key(owner, name, media_type)
    principal = await principal_async(request)

    def build() -> Page:
        try:
            if name is None:
                return _root_page(hub, principal, owner, fmt, media_type)
            return _project_page(hub, principal, owner, name, fmt, media_type)
        except (NotFound, Conflict) as exc:  # cached too (cheap 404s)
            body = json.dumps({"detail": exc.detail}).encode()
            return Page(body, "application/json", "", exc.status_code)

    async def build_async() -> Page:
        return await run_in_threadpool(build)

    if anonymous:
        cache: IndexCache[Page] = request.app.state.index_cache
        await cache.revalidate(partial(run_in_threadpool, hub.generation))
        page = await cache.get_or_build(key, build_async)
    else:
        page = await build_async()
    status, headers, body = page_response(page, anonymous, request.headers.get("if-none-match"))
    return Response(body, status_code=status, headers=headers)


@router.get("/simple/", summary="Global project list (PEP 503/691)")
async def global_root(request: Request) -> Response:
    return await _serve(request, None, None)


@router.get("/simple/{name}/", summary="Global project page (PEP 503/691)")
async def global_project(request: Request, name: str) -> Response:
    if name != normalize(name):
        return RedirectResponse(f"/simple/{normalize(name)}/", status_code=301)
    return await _serve(request, None, name)


@router.get("/simple/{name}", include_in_schema=False)
async def global_project_noslash(name: str) -> Response:
    return RedirectResponse(f"/simple/{normalize(name)}/", status_code=301)


@router.get("/{owner}/simple/", summary="Per-owner project list (PEP 503/691)")
async def owner_root(request: Request, owner: str) -> Response:
    return await _serve(request, owner, None)


@router.get("/{owner}/simple/{name}/", summary="Per-owner project page (PEP 503/691)")
async def owner_project(request: Request, owner: str, name: str) -> Response:
    if name != normalize(name):
        return RedirectResponse(f"/{owner}/simple/{normalize(name)}/", status_code=301)
    return await _serve(request, owner, name)


@router.get("/{owner}/simple/{name}", include_in_schema=False)
async def owner_project_noslash(owner: str, name: str) -> Response:
    return RedirectResponse(f"/{owner}/simple/{normalize(name)}/", status_code=301)


_SMALL_FILE = 1024 * 1024


def _lookup(
    hub: Hub, principal: Principal, owner: str, name: str, filename: str
) -> DownloadInfo | bytes:
    """The file's record, or for ``<file>.metadata`` the PEP 658 metadata bytes."""
    if filename.endswith(".metadata"):
        f = hub.queries.file_for_download(principal, owner, name, filename[: -len(".metadata")])
        meta = hub.queries.core_metadata(f.id) if f.metadata_sha256 else None
        if meta is None:
            raise NotFound("this file has no separate metadata")
        return meta
    return hub.queries.file_for_download(principal, owner, name, filename)


@router.get("/files/{owner}/{name}/{filename}", summary="Download a file (or its .metadata)")
async def download(request: Request, owner: str, name: str, filename: str) -> Response:
    hub = hub_of(request)
    anonymous = not request.headers.get("authorization")
    cache: IndexCache[DownloadInfo | bytes] = request.app.state.file_cache
    key = (owner, name, filename)
    if anonymous:
        await cache.revalidate(partial(run_in_threadpool, hub.generation))
    found = cache.get(key) if anonymous else None
    if found is None:
        principal = await principal_async(request)
        found = await run_in_threadpool(_lookup, hub, principal, owner, name, filename)
        if anonymous:
            cache.put(key, found)
    immutable = ("public" if anonymous else "private") + ", max-age=31536000, immutable"
    if isinstance(found, bytes):
        return Response(
            found, media_type="text/plain; charset=utf-8", headers={"Cache-Control": immutable}
        )
    f = found
    hub.downloads.add(f.id, f.environment_id)
    url = hub.storage.presigned_get(f.storage_key, f.filename)
    if url is not None:
        return RedirectResponse(url, status_code=302)
    headers = {
        "Content-Disposition": f'attachment; filename="{f.filename}"',
        "ETag": f'"{f.sha256}"',
        "Cache-Control": immutable,
    }
    media_type = "application/zip" if f.kind == "wheel" else "application/gzip"
    if isinstance(hub.storage, LocalStorage):
        path = hub.storage.local_path(f.storage_key)
        if f.size <= _SMALL_FILE:  # one thread hop instead of a chunked file response
            try:
                data = await anyio.Path(path).read_bytes()
            except FileNotFoundError:
                raise NotFound(f"artifact {f.filename} is missing from the store") from None
            return Response(data, media_type=media_type, headers=headers)
        if not await anyio.Path(path).is_file():
            raise NotFound(f"artifact {f.filename} is missing from the store")
        return FileResponse(path, media_type=media_type, headers=headers)
    chunks = hub.storage.iter_bytes(f.storage_key)
    headers["Content-Length"] = str(f.size)
    return StreamingResponse(chunks, media_type=media_type, headers=headers)
