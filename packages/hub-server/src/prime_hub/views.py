"""JSON shapes of environments and versions, shared by the JSON and compatibility APIs."""

from __future__ import annotations

import datetime as dt
from typing import Any

from .db.models import Environment, File, Version
from .names import module_name, normalize


def iso(t: dt.datetime | None) -> str | None:
    if t is None:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.UTC)
    return t.isoformat()


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
    base: str, env: Environment, latest: Version | None, with_readme: bool = False
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
        "install": (
            f"pip install --index-url {base}/{env.owner.slug}/simple/ {normalize(env.name)}"
        ),
    }
    if with_readme:
        out["readme"] = env.readme
        out["readme_content_type"] = env.readme_content_type
    return out
