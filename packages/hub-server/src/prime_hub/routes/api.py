"""The JSON API for the CLI and the web: environments, versions, uploads, tokens, whoami."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from ..deps import (
    base_url,
    hub_of,
    principal_async,
    principal_sync,
)
from ..errors import BadRequest
from ..lean_listings import Viewer, listing_route
from ..listing_items import api_entry, decoder_for, json_listing
from ..publishing import publish_uploads
from ..service import Hub
from ..uploads import SpoolDir, receive_form, upload_route
from ..views import (
    environment_detail_view,
    iso,
    version_view,
)
from . import staged

router = APIRouter(prefix="/api/v1", tags=["api"])
MAX_FILES = 10  # one version's wheels and sdist
NO_TOKEN = "no API token given"


@router.get("/whoami", summary="The caller's account and token")
def whoami(request: Request) -> dict[str, Any]:
    p = principal_sync(request)
    user = p.require_user(NO_TOKEN)
    return {
        "username": user.slug,
        "email": user.email,
        "is_admin": user.is_admin,
        "token": {
            "id": p.token.id if p.token else None,
            "scope": p.token.scope if p.token else None,
            "environment": p.token.environment if p.token else None,
        },
        "organizations": hub_of(request).accounts.owner_names(p),
    }


@listing_route(
    router.get(
        "/environments",
        summary="List and search environments (paginated)",
        response_model=dict[str, Any],
    ),
    viewer=lambda request: Viewer(principal_sync(request), base_url(request)),
)
def list_environments(
    hub: Hub,
    viewer: Viewer,
    *,
    search: str | None = None,
    owner: str | None = None,
    tag: list[str] = Query(default=[]),
    visibility: str | None = None,
    mine: bool = False,
    sort: str = "created_at",
    order: str = "desc",
    limit: int = Query(default=20, ge=1, le=200),
    offset: int = Query(default=0, ge=0),
) -> Response:
    """``GET /api/v1/environments``: a page of environments, their total, the page's bounds."""
    rows, total = hub.queries.listing_rows(
        viewer.principal,
        search=search,
        owner=owner,
        tags=tag,
        visibility=visibility,
        mine=mine,
        sort=sort,
        order=order,
        limit=limit,
        offset=offset,
    )
    pass_through = hub.settings.upstream is not None
    decoder = decoder_for(hub.db.read_engine.dialect)
    body = json_listing(
        "items",
        [api_entry(decoder, viewer.base, pass_through, row) for row in rows],
        [("total", total), ("limit", limit), ("offset", offset)],
    )
    return Response(body, media_type="application/json")


@router.get("/environments/{owner}/{name}", summary="Environment details")
def get_environment(request: Request, owner: str, name: str) -> dict[str, Any]:
    hub = hub_of(request)
    env = hub.queries.get_environment(principal_sync(request), owner, name)
    return environment_detail_view(
        base_url(request),
        env,
        hub.queries.latest_version(env),
        pass_through=hub.settings.upstream is not None,
    )


class EnvironmentPatch(BaseModel):
    visibility: str | None = None
    description: str | None = None
    tags: list[str] | None = None
    readme: str | None = None


@router.patch("/environments/{owner}/{name}", summary="Change visibility, description, tags")
def patch_environment(
    request: Request, owner: str, name: str, body: EnvironmentPatch
) -> dict[str, Any]:
    hub = hub_of(request)
    env = hub.management.update_environment(
        principal_sync(request), owner, name, **body.model_dump()
    )
    return environment_detail_view(
        base_url(request),
        env,
        hub.queries.latest_version(env),
        pass_through=hub.settings.upstream is not None,
    )


@router.delete("/environments/{owner}/{name}", summary="Delete an environment (names stay taken)")
def delete_environment(request: Request, owner: str, name: str) -> dict[str, Any]:
    hub_of(request).management.delete_environment(principal_sync(request), owner, name)
    return {"deleted": f"{owner}/{name}"}


@router.get("/environments/{owner}/{name}/versions", summary="Versions, newest first")
def list_versions(request: Request, owner: str, name: str) -> dict[str, Any]:
    hub = hub_of(request)
    env = hub.queries.get_environment(principal_sync(request), owner, name)
    base = base_url(request)
    return {"versions": [version_view(base, env, v) for v in hub.queries.versions(env)]}


@router.get("/environments/{owner}/{name}/versions/{version}", summary="One version")
def get_version(request: Request, owner: str, name: str, version: str) -> dict[str, Any]:
    hub = hub_of(request)
    env = hub.queries.get_environment(principal_sync(request), owner, name)
    return version_view(base_url(request), env, hub.queries.find_version(env, version))


@router.post(
    "/environments/{owner}/{name}/versions",
    summary="Publish a version: multipart 'files' (wheel and/or sdist), one transaction",
)
@upload_route
async def publish(request: Request, owner: str, name: str) -> JSONResponse:
    hub = hub_of(request)
    principal = await principal_async(request)
    # who may publish here is settled before a byte of the body is read
    await run_in_threadpool(hub.publishing.check_may_upload, principal, owner, name)
    with SpoolDir(hub.settings) as spool:
        form = await receive_form(
            request,
            spool,
            file_limit=hub.settings.max_upload_bytes,
            max_files=MAX_FILES,
            max_fields=50,
        )
        vis = form.get("visibility")
        result = await run_in_threadpool(
            publish_uploads,
            hub,
            principal,
            owner,
            name,
            form.files_named("files"),
            visibility=vis or None,
            description=form.get("description"),
            tags=form.getlist("tags") or None,
        )
    body = version_view(base_url(request), result.environment, result.version)
    body["created"] = result.created
    body["added_files"] = result.added_files
    return JSONResponse(body, status_code=201 if result.added_files else 200)


class YankBody(BaseModel):
    reason: str = Field(default="", max_length=1000)


@router.post("/environments/{owner}/{name}/versions/{version}/yank", summary="Yank (PEP 592)")
def yank(request: Request, owner: str, name: str, version: str, body: YankBody) -> dict[str, Any]:
    v = hub_of(request).management.set_yanked(
        principal_sync(request), owner, name, version, True, body.reason
    )
    return {"version": v.version, "yanked": True, "yanked_reason": v.yanked_reason}


@router.post("/environments/{owner}/{name}/versions/{version}/unyank", summary="Un-yank")
def unyank(request: Request, owner: str, name: str, version: str) -> dict[str, Any]:
    v = hub_of(request).management.set_yanked(principal_sync(request), owner, name, version, False)
    return {"version": v.version, "yanked": False}


@router.delete(
    "/environments/{owner}/{name}/versions/{version}",
    summary="Delete a version (its file names are never reused)",
)
def delete_version(request: Request, owner: str, name: str, version: str) -> dict[str, Any]:
    v = hub_of(request).management.delete_version(principal_sync(request), owner, name, version)
    return {"deleted": v.version}


class TokenRequest(BaseModel):
    scope: str = "read"
    environment: str | None = None
    name: str = ""
    expires_in_days: int | None = None


@router.post("/tokens", summary="Create a token for yourself (shown once)", status_code=201)
def create_token(request: Request, body: TokenRequest) -> dict[str, Any]:
    p = principal_sync(request)
    tok, plain = hub_of(request).accounts.mint_token(
        p, body.scope, body.environment, body.name, body.expires_in_days
    )
    return {"id": tok.id, "token": plain, "scope": tok.scope, "environment": tok.environment}


@router.get("/tokens", summary="Your tokens (without secrets)")
def list_tokens(request: Request) -> dict[str, Any]:
    user = principal_sync(request).require_user(NO_TOKEN)
    return {
        "tokens": [
            {
                "id": t.id,
                "name": t.name,
                "scope": t.scope,
                "environment": t.environment,
                "created_at": iso(t.created_at),
                "revoked": t.revoked_at is not None,
            }
            for t in hub_of(request).accounts.list_tokens(user.slug)
        ]
    }


@router.delete(
    "/tokens/{token_id}",
    summary="Revoke a token, and the tokens minted from it (needs at least its rights)",
)
def revoke_token(request: Request, token_id: int) -> dict[str, Any]:
    p = principal_sync(request)
    p.require_user(NO_TOKEN)
    ids = hub_of(request).accounts.revoke_token(token_id, by=p)
    return {"revoked": token_id, "revoked_ids": ids}


class StagedFile(BaseModel):
    filename: str
    sha256: str = Field(pattern=r"^[0-9a-fA-F]{64}$")
    size: int = Field(ge=1)


class StageRequest(BaseModel):
    version: str
    files: list[StagedFile] = Field(min_length=1, max_length=10)
    visibility: str | None = None


@router.post(
    "/environments/{owner}/{name}/uploads",
    summary="Announce files and get URLs to PUT them to (presigned when the store is S3)",
)
def stage(request: Request, owner: str, name: str, body: StageRequest) -> dict[str, Any]:
    hub = hub_of(request)
    p = principal_sync(request)
    env, _ = hub.publishing.ensure_environment(p, owner, name, body.visibility)
    out = []
    for f in body.files:
        kind = "wheel" if f.filename.endswith(".whl") else "sdist"
        pending = hub.staging.create_pending(
            p,
            env,
            kind=kind,
            filename=f.filename,
            sha256=f.sha256,
            size=f.size,
            version=body.version,
            content_hash=None,
            extra={},
        )
        out.append(
            {
                "upload_id": pending.id,
                "filename": f.filename,
                "upload_url": staged.upload_url(request, pending),
            }
        )
    return {"uploads": out}


class CompleteRequest(BaseModel):
    upload_ids: list[str] = Field(min_length=1, max_length=10)


@router.post(
    "/environments/{owner}/{name}/uploads/complete",
    summary="Publish the announced files as one version (one transaction)",
)
def complete(request: Request, owner: str, name: str, body: CompleteRequest) -> JSONResponse:
    hub = hub_of(request)
    p = principal_sync(request)
    env = hub.queries.get_environment(p, owner, name)
    pendings = [hub.staging.get_pending(i) for i in body.upload_ids]
    if any(x.environment_id != env.id for x in pendings):
        raise BadRequest("an upload id belongs to another environment")
    result = staged.publish_pending(hub, p, env, pendings)
    view = version_view(base_url(request), result.environment, result.version)
    view["created"] = result.created
    return JSONResponse(view, status_code=201 if result.added_files else 200)


@router.get("/orgs/{org}/members", summary="Members of an organisation (members only)")
def list_members(request: Request, org: str) -> dict[str, Any]:
    rows = hub_of(request).accounts.members(principal_sync(request), org)
    return {"members": [{"username": u, "role": r} for u, r in rows]}


class MemberBody(BaseModel):
    role: str = "publisher"


@router.put("/orgs/{org}/members/{user}", summary="Add a member or change a role (org owners)")
def put_member(request: Request, org: str, user: str, body: MemberBody) -> dict[str, Any]:
    hub_of(request).accounts.set_member(org, user, body.role, by=principal_sync(request))
    return {"username": user, "role": body.role}


@router.delete("/orgs/{org}/members/{user}", summary="Remove a member (org owners)")
def delete_member(request: Request, org: str, user: str) -> dict[str, Any]:
    hub_of(request).accounts.set_member(org, user, None, by=principal_sync(request))
    return {"removed": user}
