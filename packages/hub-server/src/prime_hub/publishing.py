"""Turning received files into a published version (shared by the legacy and JSON APIs)."""

from __future__ import annotations

from pathlib import Path

from .auth import Principal
from .core.upload_rules import check_declared, uploaded_filename
from .errors import BadRequest
from .names import validate_project_name
from .service import Hub, PublishResult
from .uploads import ReceivedFile
from .validation import ArtifactInfo, validate_artifact


def validate_files(hub: Hub, paths: list[tuple[Path, str]]) -> list[tuple[ArtifactInfo, Path]]:
    limit = hub.settings.max_uncompressed_bytes
    return [(validate_artifact(p, fn, limit), p) for p, fn in paths]


def publish_uploads(
    hub: Hub,
    principal: Principal,
    owner: str,
    name: str | None,
    uploads: list[ReceivedFile],
    *,
    declared_version: str | None = None,
    sha256_digest: str | None = None,
    visibility: str | None = None,
    description: str | None = None,
    tags: list[str] | None = None,
) -> PublishResult:
    """Publish files a route already received (``uploads.receive_form``, under the cap)."""
    if name is not None:
        validate_project_name(name)
    if not uploads:
        raise BadRequest("no files in the upload")
    spooled = [(up.path, uploaded_filename(up.filename)) for up in uploads]
    artifacts = validate_files(hub, spooled)
    first = artifacts[0][0]
    check_declared(first, name, declared_version, sha256_digest)
    return hub.publishing.publish(
        principal,
        owner,
        name or first.name or "",
        artifacts,
        visibility=visibility,
        description=description,
        tags=tags,
    )
