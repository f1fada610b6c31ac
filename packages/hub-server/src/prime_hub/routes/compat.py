"""Endpoints the public ``prime`` CLI (0.18) calls, so it can push and install unmodified.

Payloads are wrapped in ``{"data": ...}``; errors are ``{"detail": ...}``. The CLI's push is
four requests (wheel announce/finalize, source announce/finalize); nothing is published until
the last one, which validates both staged files and publishes them in one transaction.
``prime env inspect`` lives in compat_inspect.py; links, login and the hosted-only features
(secrets, variables, fork) in compat_extras.py.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request, Response
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion
from pydantic import BaseModel

from ..auth import Principal
from ..db.models import Environment, Version
from ..deps import WorkDir, base_url, hub_of, principal_sync
from ..errors import BadRequest, Conflict, NotFound
from ..lean_listings import Viewer, listing_route
from ..listing_items import cli_entry, decoder_for, json_listing
from ..names import module_name, normalize
from ..service import Hub
from ..validation import parse_version
from ..views import iso
from . import staged

router = APIRouter(prefix="/api/v1", tags=["prime-cli compatibility"])


def _need_user(p: Principal) -> Principal:
    p.require_user("API key unauthorized: this call needs an API key")
    return p


@router.get("/user/whoami")
def whoami(request: Request) -> dict[str, Any]:
    p = _need_user(principal_sync(request))
    u = p.user
    assert u is not None
    return {
        "data": {
            "id": str(u.id),
            "name": u.display_name or u.slug,
            "email": u.email,
            "slug": u.slug,
            "scope": _scope_view(p),
            "account_limits": {},
            "key_limits": {},
        }
    }


def _scope_view(p: Principal) -> dict[str, dict[str, bool]]:
    """The token's reach as the CLI's "Token Permissions" table wants it: scope -> read/write.
    A token covers every environment its user can reach, or one ``owner/name``."""
    if p.token is None:
        return {}
    target = f"environment {p.token.environment}" if p.token.environment else "environments"
    return {target: {"read": True, "write": p.token.scope == "publish"}}


@router.get("/user/teams")
def teams(request: Request, offset: int = 0, limit: int = 100) -> dict[str, Any]:
    p = _need_user(principal_sync(request))
    orgs = hub_of(request).accounts.owner_names(p)
    data = [
        {
            "teamId": str(o["id"]),
            "name": o["slug"],
            "slug": o["slug"],
            "role": o["role"].upper(),
            "createdAt": iso(o["created_at"]),
        }
        for o in orgs
    ][offset : offset + limit]
    return {"data": data, "total_count": len(orgs)}


class SlugBody(BaseModel):
    slug: str


@router.patch("/user/slug")
def set_slug(request: Request, body: SlugBody) -> dict[str, Any]:
    p = _need_user(principal_sync(request))
    assert p.user is not None
    if body.slug != p.user.slug:
        raise Conflict("user names are fixed on this hub (ask an admin)")
    return {"data": {"slug": p.user.slug}}


@listing_route(
    router.get("/environmentshub/", response_model=dict[str, Any]),
    viewer=lambda request: Viewer(principal_sync(request), base_url(request)),
)
def list_envs(
    hub: Hub,
    viewer: Viewer,
    *,
    limit: int = Query(default=20, ge=1, le=200),
    offset: int = Query(default=0, ge=0),
    sort_by: str = "created_at",
    sort_order: str = "desc",
    owner: str | None = None,
    visibility: str | None = None,
    search: str | None = None,
    tags: list[str] = Query(default=[]),
    mine_only: bool = False,
    starred_only: bool = False,
    include_teams: bool = True,
) -> Response:
    """The CLI's ``GET /api/v1/environmentshub/`` (no stars here: ``starred_only`` lists none)."""
    rows, total = hub.queries.listing_rows(
        viewer.principal,
        search=search,
        owner=owner,
        tags=tags,
        visibility=visibility,
        mine=mine_only,
        sort=sort_by,
        order=sort_order,
        limit=limit,
        offset=offset,
    )
    if starred_only:
        rows, total = [], 0
    decoder = decoder_for(hub.db.read_engine.dialect)
    body = json_listing("data", [cli_entry(decoder, row) for row in rows], [("total_count", total)])
    return Response(body, media_type="application/json")


class ResolveBody(BaseModel):
    name: str
    visibility: str | None = None
    owner_slug: str | None = None
    team_slug: str | None = None
    team_id: str | None = None


def _owner_from(hub: Hub, p: Principal, body: ResolveBody) -> str:
    assert p.user is not None
    if body.owner_slug or body.team_slug:
        return body.owner_slug or body.team_slug or ""
    if body.team_id:
        for o in hub.accounts.owner_names(p):
            if str(o["id"]) == body.team_id or o["slug"] == body.team_id:
                return str(o["slug"])
        raise NotFound(f"no team {body.team_id!r} for this user")
    return p.user.slug


@router.post("/environmentshub/resolve")
def resolve(request: Request, body: ResolveBody) -> dict[str, Any]:
    hub = hub_of(request)
    p = _need_user(principal_sync(request))
    owner = _owner_from(hub, p, body)
    env, created = hub.publishing.ensure_environment(p, owner, body.name, body.visibility)
    return {
        "data": {
            "id": str(env.id),
            "name": env.name,
            "owner": {"name": env.owner.slug},
            "visibility": env.visibility.upper(),
            "created": created,
        }
    }


class LookupBody(BaseModel):
    id: str


@router.post("/environmentshub/lookup")
def lookup(request: Request, body: LookupBody) -> dict[str, Any]:
    env = _env_by_id(request, body.id)
    return {"data": {"id": str(env.id), "name": env.name, "owner": {"name": env.owner.slug}}}


def _env_by_id(request: Request, env_id: str) -> Environment:
    if not env_id.isdigit():
        raise NotFound(f"environment {env_id} not found")
    return hub_of(request).queries.get_environment_by_id(principal_sync(request), int(env_id))


@router.get("/environmentshub/{owner}/{name}/status")
def status(request: Request, owner: str, name: str) -> dict[str, Any]:
    hub = hub_of(request)
    env = hub.queries.get_environment(principal_sync(request), owner, name)
    latest = hub.queries.latest_version(env)
    return {
        "data": {
            "name": env.name,
            "description": env.description,
            "visibility": env.visibility.upper(),
            "latest_version": _latest_view(latest),
        }
    }


def _latest_view(v: Version | None) -> dict[str, Any] | None:
    if v is None:
        return None
    return {
        "semantic_version": v.version,
        "content_hash": v.content_hash or _wheel_sha(v),
        "created_at": iso(v.created_at),
    }


def _wheel_sha(v: Version) -> str | None:
    wheel = next((f for f in v.files if f.kind == "wheel"), None)
    return wheel.sha256 if wheel else None


def _url_deps(deps: list[str]) -> list[str]:
    out = []
    for d in deps:
        try:
            if Requirement(d).url:
                out.append(d)
        except InvalidRequirement:
            continue
    return out


@router.get("/environmentshub/{owner}/{name}/@{ref}")
def get_ref(request: Request, owner: str, name: str, ref: str) -> dict[str, Any]:
    hub = hub_of(request)
    env = hub.queries.get_environment(principal_sync(request), owner, name)
    v = hub.queries.find_version(env, ref)
    base = base_url(request)
    files_base = f"{base}/files/{env.owner.slug}/{normalize(env.name)}"
    wheel = next((f for f in v.files if f.kind == "wheel"), None)
    source = next((f for f in v.files if f.kind in ("source", "sdist")), None)
    data: dict[str, Any] = {
        "id": str(env.id),
        "name": env.name,
        "owner": env.owner.slug,
        "package": module_name(env.name),
        "visibility": env.visibility.upper(),
        "semantic_version": v.version,
        "version": v.version,
        "content_hash": v.content_hash or _wheel_sha(v),
        "sha256": wheel.sha256 if wheel else None,
        "created_at": iso(v.created_at),
        "yanked": v.yanked,
        "latest_version": _latest_view(hub.queries.latest_version(env)),
        "metadata": {
            "description": env.description,
            "tags": [t.tag for t in env.tags],
            "dependencies": v.dependencies,
            "python_requires": v.requires_python,
        },
        "url_dependencies": _url_deps(v.dependencies),
    }
    if source is not None:
        data["package_url"] = data["tracked_package_url"] = f"{files_base}/{source.filename}"
    if env.visibility == "public":
        # private environments get no index URL: the CLI then downloads the source with its key
        data["simple_index_url"] = data["install_index_url"] = f"{base}/{env.owner.slug}/simple/"
        if wheel is not None:
            data["wheel_url"] = f"{files_base}/{wheel.filename}"
    return {"data": data}


@router.get("/environmentshub/{owner}/{name}/versions")
def versions(request: Request, owner: str, name: str) -> dict[str, Any]:
    hub = hub_of(request)
    env = hub.queries.get_environment(principal_sync(request), owner, name)
    return {"data": {"versions": [_version_view(v) for v in hub.queries.versions(env)]}}


def _version_view(v: Version) -> dict[str, Any]:
    """One row of ``prime env version list``. The CLI prints ``sha256`` under "Content Hash"
    (the handle ``version delete`` takes) and ``size`` as "N artifacts", so those two carry
    exactly that; the byte total and the files themselves have their own keys."""
    files = sorted(v.files, key=lambda f: f.filename)
    return {
        "id": str(v.id),
        "version": v.version,
        "semantic_version": v.version,
        "content_hash": v.content_hash,
        "sha256": v.content_hash or _wheel_sha(v),
        "created_at": iso(v.created_at),
        "size": len(files),
        "artifacts": [
            {"filename": f.filename, "kind": f.kind, "size": f.size, "sha256": f.sha256}
            for f in files
        ],
        "total_bytes": sum(f.size for f in files),
        "yanked": v.yanked,
    }


@router.delete("/environmentshub/{owner}/{name}/@{ref}")
def delete_ref(request: Request, owner: str, name: str, ref: str) -> dict[str, Any]:
    v = hub_of(request).management.delete_version(principal_sync(request), owner, name, ref)
    return {"data": {"success": True, "message": f"deleted version {v.version}"}}


@router.delete("/environmentshub/{owner}/{name}")
def delete_env(request: Request, owner: str, name: str) -> dict[str, Any]:
    hub_of(request).management.delete_environment(principal_sync(request), owner, name)
    return {"data": {"success": True, "message": f"deleted {owner}/{name}"}}


class ArtifactBody(BaseModel):
    content_hash: str | None = None
    filename: str
    sha256: str
    size: int | None = None
    semantic_version: str
    metadata: dict[str, Any] = {}
    runtime_hint: str | None = None


def _check_new_version(hub: Hub, env: Environment, body: ArtifactBody) -> None:
    want = parse_version(body.semantic_version)
    for v in hub.queries.versions(env):
        if body.content_hash and v.content_hash == body.content_hash:
            raise Conflict(
                f"Version with content hash {body.content_hash[:12]} already exists "
                f"({v.version}); change the content or bump the version"
            )
        if parse_version(v.version) == want:
            raise Conflict(
                f"version {v.version} of {env.owner.slug}/{env.name} already exists with "
                "different content; versions are immutable: bump the version"
            )


@router.post("/environmentshub/{env_id}/wheels")
def announce_wheel(request: Request, env_id: str, body: ArtifactBody) -> dict[str, Any]:
    hub = hub_of(request)
    p = _need_user(principal_sync(request))
    env = _env_by_id(request, env_id)
    try:
        dist = parse_wheel_filename(body.filename)[0]
    except (InvalidWheelFilename, InvalidVersion) as exc:
        raise BadRequest(f"invalid wheel file name {body.filename!r}: {exc}") from exc
    if normalize(dist) != env.normalized_name:
        raise BadRequest(
            f"the wheel is the distribution {dist!r}, not the environment {env.name!r}: "
            "installers look the environment up by its name, so they must agree"
        )
    _check_new_version(hub, env, body)
    pending = _stage(hub, p, env, body, "wheel")
    return {"data": {"wheel_id": pending.id, "upload_url": staged.upload_url(request, pending)}}


def _stage(hub: Any, principal: Any, env: Any, body: ArtifactBody, kind: str) -> Any:
    """Record an announced artifact as pending until its bytes are PUT and finalized."""
    return hub.staging.create_pending(
        principal,
        env,
        kind=kind,
        filename=body.filename,
        sha256=body.sha256,
        size=body.size,
        version=body.semantic_version,
        content_hash=body.content_hash,
        extra={"metadata": body.metadata},
    )


def _finalize_one(request: Request, env_id: str, upload_id: str) -> None:
    hub = hub_of(request)
    _need_user(principal_sync(request))
    env = _env_by_id(request, env_id)
    pending = hub.staging.get_pending(upload_id)
    if pending.environment_id != env.id:
        raise NotFound("no such upload for this environment")
    with WorkDir(hub) as work:  # check the bytes now, so a bad PUT is reported at once
        staged.verify_staged(hub, pending, work)
    hub.staging.mark_pending(upload_id, "uploaded")


@router.post("/environmentshub/{env_id}/wheels/{wheel_id}/finalize")
def finalize_wheel(request: Request, env_id: str, wheel_id: str) -> dict[str, Any]:
    _finalize_one(request, env_id, wheel_id)
    return {"data": {"success": True, "message": "wheel received"}}


@router.post("/environmentshub/{env_id}/versions")
def announce_version(request: Request, env_id: str, body: ArtifactBody) -> dict[str, Any]:
    hub = hub_of(request)
    p = _need_user(principal_sync(request))
    env = _env_by_id(request, env_id)
    _check_new_version(hub, env, body)
    pending = _stage(hub, p, env, body, "source")
    return {"data": {"version_id": pending.id, "upload_url": staged.upload_url(request, pending)}}


@router.post("/environmentshub/{env_id}/versions/{version_id}/finalize")
def finalize_version(request: Request, env_id: str, version_id: str) -> dict[str, Any]:
    hub = hub_of(request)
    p = _need_user(principal_sync(request))
    _finalize_one(request, env_id, version_id)
    env = _env_by_id(request, env_id)
    source = hub.staging.get_pending(version_id)
    assert p.user is not None
    wheels = [
        x
        for x in hub.staging.pending_for(env.id, source.version, p.user.id)
        if x.kind == "wheel" and x.state == "uploaded"
    ]
    if not wheels:
        raise BadRequest("upload and finalize the wheel before the source archive")
    wheel = max(wheels, key=lambda x: x.created_at)
    meta = source.extra.get("metadata") or {}
    tags = meta.get("tags") if isinstance(meta.get("tags"), list) else None
    desc = meta.get("description") if isinstance(meta.get("description"), str) else None
    result = staged.publish_pending(hub, p, env, [wheel, source], description=desc, tags=tags)
    stale = [x.id for x in wheels if x.id != wheel.id]
    if stale:
        hub.staging.drop_pending(stale)
    return {
        "data": {
            "success": True,
            "message": f"published {env.owner.slug}/{env.name} {result.version.version}",
            "version_id": str(result.version.id),
        }
    }
