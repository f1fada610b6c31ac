"""The legacy upload endpoint (``/legacy/``) used by twine and ``uv publish``.

``/legacy/`` publishes into the token's environment owner (for a token bound to one
environment) or the token user's own namespace; ``/{owner}/legacy/`` names the owner.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from ..deps import hub_of, principal_async
from ..errors import BadRequest, Unauthorized
from ..publishing import publish_uploads
from ..uploads import SpoolDir, receive_form, upload_route

router = APIRouter(tags=["upload"])


async def _legacy(request: Request, owner: str | None) -> JSONResponse:
    hub = hub_of(request)
    principal = await principal_async(request)
    if principal.user is None:
        raise Unauthorized("uploads need an API token (user __token__, password = the token)")
    if owner is None:
        tok_env = principal.token.environment if principal.token else None
        owner = tok_env.partition("/")[0] if tok_env else principal.user.slug
    # the project name is inside the body; the owner and the token's rights are not
    await run_in_threadpool(hub.publishing.check_may_upload, principal, owner, None)
    with SpoolDir(hub.settings) as spool:
        form = await receive_form(
            request, spool, file_limit=hub.settings.max_upload_bytes, max_files=2, max_fields=200
        )
        action = form.get(":action")
        if action not in ("file_upload", None):
            raise BadRequest(f"unsupported :action {action!r}")
        content = form.files_named("content")
        if not content:
            raise BadRequest("the form has no 'content' file")
        result = await run_in_threadpool(
            publish_uploads,
            hub,
            principal,
            owner,
            form.get("name"),
            content,
            declared_version=form.get("version"),
            sha256_digest=form.get("sha256_digest"),
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
@upload_route
async def legacy_upload(request: Request) -> JSONResponse:
    return await _legacy(request, None)


@router.post("/{owner}/legacy/", summary="Legacy upload into a named owner")
@upload_route
async def legacy_upload_owner(request: Request, owner: str) -> JSONResponse:
    return await _legacy(request, owner)
