"""Turning received files into a published version (shared by the legacy and JSON APIs)."""

from __future__ import annotations

from pathlib import Path

from .auth import Principal
from .errors import BadRequest, InvalidPackage
from .names import normalize, validate_project_name
from .service import Hub, PublishResult
from .uploads import ReceivedFile
from .validation import ArtifactInfo, parse_version, validate_artifact


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
    spooled: list[tuple[Path, str]] = []
    for up in uploads:
        filename = up.filename.replace("\\", "/").rsplit("/", 1)[-1]
        if not filename:
            raise BadRequest("an uploaded file has no file name")
        spooled.append((up.path, filename))
    artifacts = validate_files(hub, spooled)
    first = artifacts[0][0]
    env_name = name or first.name or ""
    if name and normalize(first.name or "") != normalize(name):
        raise InvalidPackage(
            f"{first.filename} is the distribution {first.name!r}, but the upload says {name!r}"
        )
    if declared_version is not None and parse_version(declared_version) != parse_version(
        first.version or ""
    ):
        raise InvalidPackage(
            f"{first.filename} is version {first.version}, but the upload says {declared_version}"
        )
    if sha256_digest and sha256_digest.lower() != first.sha256:
        raise InvalidPackage(
            f"{first.filename}: sha256 {first.sha256} does not match the declared {sha256_digest}"
        )
    return hub.publish(
        principal,
        owner,
        env_name,
        artifacts,
        visibility=visibility,
        description=description,
        tags=tags,
    )
