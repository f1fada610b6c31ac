"""The legacy upload endpoint (``/legacy/``) used by twine and ``uv publish``.

``/legacy/`` publishes into the token's environment owner (for a token bound to one
environment) or the token user's own namespace; ``/{owner}/legacy/`` names the owner.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from ..deps import check_content_length, hub_of, principal_async
from ..errors import BadRequest, Unauthorized
from ..publishing import publish_uploads

router = APIRouter(tags=["upload"])


async def _legacy(request: Request, owner: str | None) -> JSONResponse:
    check_content_length(request)
    principal = await principal_async(request)
    if principal.user is None:
        raise Unauthorized("uploads need an API token (user __token__, password = the token)")
    hub = hub_of(request)
    async with request.form(max_files=2, max_fields=200) as form:
        action = form.get(":action")
        if action not in ("file_upload", None):
            raise BadRequest(f"unsupported :action {action!r}")
        content = form.get("content")
        if not isinstance(content, UploadFile):
            raise BadRequest("the form has no 'content' file")
        name = form.get("name")
        version = form.get("version")
        sha = form.get("sha256_digest")
        if owner is None:
            tok_env = principal.token.environment if principal.token else None
            owner_slug = tok_env.partition("/")[0] if tok_env else principal.user.slug
        else:
            owner_slug = owner
        result = await run_in_threadpool(
            publish_uploads,
            hub,
            principal,
            owner_slug,
            str(name) if isinstance(name, str) else None,
            [content],
            declared_version=str(version) if isinstance(version, str) else None,
            sha256_digest=str(sha) if isinstance(sha, str) else None,
        )
    status = 201 if result.added_files else 200
    return JSONResponse(
        {
            "environment": f"{result.environment.owner.slug}/{result.environment.name}",
            "version": result.version.version,
            "created": bool(result.added_files),
            "files": result.added_files,
        },
        status_code=status,
    )


@router.post("/legacy/", summary="Legacy upload (twine, uv publish) into your own namespace")
async def legacy_upload(request: Request) -> JSONResponse:
    return await _legacy(request, None)


@router.post("/{owner}/legacy/", summary="Legacy upload into a named owner")
async def legacy_upload_owner(request: Request, owner: str) -> JSONResponse:
    return await _legacy(request, owner)
