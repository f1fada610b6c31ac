"""JSON shapes of environments and versions, shared by the JSON and compatibility APIs."""

from __future__ import annotations

import datetime as dt
from typing import Any

from fastapi import Request

from .core.queries import LatestVersion, ListedEnvironment
from .db.models import Environment, File, Version
from .deps import base_url, hub_of
from .names import module_name, normalize


def iso(t: dt.datetime | None) -> str | None:
    """A stored time in ISO 8601; the database's naive times are UTC. (Spelled with the
    offset appended: `replace(tzinfo=...)` costs a microsecond per time, and a listing of
    200 environments formats 400 of them.)"""
    if t is None:
        return None
    if t.tzinfo is None:
        return t.isoformat() + "+00:00"
    return t.isoformat()


def install_commands(base: str, owner: str, name: str, pass_through: bool) -> list[str]:
    """The install commands the hub prints for ``owner/name``; each runs verbatim in a
    fresh virtualenv and resolves every name the hub hosts from the hub alone.

    With the upstream pass-through the owner's index is the only index: the hub answers its
    own names and redirects the rest to the upstream. Without it (air-gapped hubs) uv gets the
    hub as a higher-priority index with ``first-index`` (a name found on the hub is taken from
    the hub only); pip has no index priority, so no pip command is offered."""
    index, package = f"{base}/{owner}/simple/", normalize(name)
    lines = [f"prime env install {owner}/{name}"]
    if pass_through:
        lines += [
            f"uv pip install --default-index {index} {package}",
            f"pip install --index-url {index} {package}",
        ]
    else:
        lines += [
            f"uv pip install --index {index} --index-strategy first-index {package}",
            "# pip cannot prefer one index over another and this hub does not pass other "
            "names through to an upstream index: use uv or prime (never pip --extra-index-url)",
        ]
    return lines


def page_install_commands(request: Request, owner: str, name: str) -> list[str]:
    """``install_commands`` for a web page (the hub's public URL and its settings)."""
    upstream = hub_of(request).settings.upstream
    return install_commands(base_url(request), owner, name, upstream is not None)


def file_url(base: str, env: Environment, f: File) -> str:
    return f"{base}/files/{env.owner.slug}/{normalize(env.name)}/{f.filename}"


def file_view(base: str, env: Environment, f: File) -> dict[str, Any]:
    return {
        "filename": f.filename,
        "kind": f.kind,
        "sha256": f.sha256,
        "size": f.size,
        "url": file_url(base, env, f),
        "requires_python": f.requires_python,
        "uploaded_at": iso(f.uploaded_at),
        "downloads": f.downloads,
    }


def version_view(base: str, env: Environment, v: Version) -> dict[str, Any]:
    return {
        "version": v.version,
        "summary": v.summary,
        "requires_python": v.requires_python,
        "dependencies": v.dependencies,
        "content_hash": v.content_hash,
        "uploader": v.uploader.slug if v.uploader else None,
        "created_at": iso(v.created_at),
        "yanked": v.yanked,
        "yanked_reason": v.yanked_reason,
        "files": [file_view(base, env, f) for f in v.files],
    }


def environment_view(
    base: str,
    env: Environment | ListedEnvironment,
    latest: Version | LatestVersion | None,
    *,
    pass_through: bool,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": env.id,
        "owner": env.owner.slug,
        "name": env.name,
        "package": module_name(env.name),
        "description": env.description,
        "tags": [t.tag for t in env.tags],
        "visibility": env.visibility,
        "downloads": env.downloads,
        "latest_version": latest.version if latest else None,
        "created_at": iso(env.created_at),
        "updated_at": iso(env.updated_at),
        "index_url": f"{base}/{env.owner.slug}/simple/",
        # pip's form where the hub passes other names through; uv's (index priority) where not
        "install": install_commands(base, env.owner.slug, env.name, pass_through)[
            2 if pass_through else 1
        ],
    }
    return out


def environment_detail_view(
    base: str, env: Environment, latest: Version | None, *, pass_through: bool
) -> dict[str, Any]:
    """An environment's own page in the API: its listing entry and its README."""
    out = environment_view(base, env, latest, pass_through=pass_through)
    out["readme"] = env.readme
    out["readme_content_type"] = env.readme_content_type
    return out
