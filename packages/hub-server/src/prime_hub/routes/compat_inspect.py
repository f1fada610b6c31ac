"""``prime env inspect owner/name@version [path]``: a version's source, browsed server-side.

Listings and file text come from the version's stored source archive (the one the file
browser reads; never extracted to disk). Access is the same check as every other read:
``Hub.get_environment`` answers 404 for an environment the caller may not read.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from fastapi import APIRouter, Query, Request

from ..deps import hub_of, principal_sync
from ..errors import BadRequest, NotFound
from ..web.source import Archive, Entry, open_archive, source_file

router = APIRouter(prefix="/api/v1", tags=["prime-cli compatibility"])

MAX_BYTES = 500_000  # the CLI's own upper bound for --max-bytes


def _clean(path: str | None) -> str:
    """The requested path relative to the archive root ('' is the root)."""
    raw = (path or "").strip().strip("/")
    if raw in ("", "."):
        return ""
    parts = PurePosixPath(raw).parts
    if ".." in parts or "\\" in raw or "\x00" in raw:
        raise BadRequest(f"invalid path {path!r}: give a path inside the environment's source")
    return "/".join(p for p in parts if p != ".")


def _file_entry(e: Entry) -> dict[str, Any]:
    return {
        "name": e.path.rsplit("/", 1)[-1],
        "path": e.path,
        "is_directory": False,
        "size": e.size,
    }


def _dir_entry(path: str) -> dict[str, Any]:
    return {"name": path.rsplit("/", 1)[-1], "path": path, "is_directory": True, "size": None}


def _children(archive: Archive, folder: str) -> list[dict[str, Any]] | None:
    """Immediate children of ``folder`` (directories first), or None when it is no folder."""
    prefix = f"{folder}/" if folder else ""
    dirs: set[str] = set()
    files: list[dict[str, Any]] = []
    for e in archive.entries:
        if not e.path.startswith(prefix):
            continue
        head, sep, _rest = e.path[len(prefix) :].partition("/")
        if sep:
            dirs.add(prefix + head)
        else:
            files.append(_file_entry(e))
    if not dirs and not files and folder:
        return None
    return [_dir_entry(d) for d in sorted(dirs)] + files


def _text(data: bytes, limit: int) -> tuple[str, bool]:
    """The first ``limit`` bytes as text; a multi-byte character cut by the limit is dropped."""
    if b"\x00" in data[:8192]:
        raise BadRequest("this is a binary file; download the version with `prime env pull`")
    head = data[:limit]
    for cut in range(4):  # a UTF-8 character is at most 4 bytes
        try:
            return head[: len(head) - cut].decode("utf-8"), len(data) > limit
        except UnicodeDecodeError:
            continue
    raise BadRequest("this file is not UTF-8 text; download the version with `prime env pull`")


@router.get("/environmentshub/{owner}/{name}/@{ref}/inspect")
def inspect_source(
    request: Request,
    owner: str,
    name: str,
    ref: str,
    path: str | None = None,
    max_bytes: int = Query(default=100_000, ge=1, le=MAX_BYTES),
) -> dict[str, Any]:
    hub = hub_of(request)
    env = hub.queries.get_environment(principal_sync(request), owner, name)  # the read-access check
    version = hub.queries.find_version(env, ref)
    archive = open_archive(hub.storage, source_file(version))
    rel = _clean(path)
    base: dict[str, Any] = {"path": rel, "version_id": str(version.id), "version": version.version}
    entry = next((e for e in archive.entries if e.path == rel), None) if rel else None
    if entry is not None:
        content, truncated = _text(archive.read(rel), max_bytes)
        return {
            "data": {
                **base,
                "kind": "file",
                "entry": _file_entry(entry),
                "content": content,
                "truncated": truncated,
                "total_bytes": entry.size,
            }
        }
    entries = _children(archive, rel)
    if entries is None:
        raise NotFound(
            f"no file or directory {rel} in {env.owner.slug}/{env.name} {version.version}"
        )
    return {
        "data": {
            **base,
            "kind": "directory",
            "entry": _dir_entry(rel) if rel else None,
            "entries": entries,
            "truncated": False,
        }
    }
