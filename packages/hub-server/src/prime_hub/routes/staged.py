"""Direct uploads: the client PUTs bytes to a URL (presigned S3, or this server), then a
finalize call validates the staged bytes and publishes them in one transaction."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool

from ..auth import Principal
from ..db.models import Environment, PendingUpload
from ..deps import base_url, hub_of
from ..errors import InvalidPackage, NotFound, TooLarge
from ..service import Hub, PublishResult
from ..uploads import SpoolDir, receive_body, upload_route
from ..validation import (
    ArtifactInfo,
    file_sha256,
    validate_artifact,
    validate_source_archive,
)

router = APIRouter(prefix="/api/v1", tags=["upload"])


def upload_url(request: Request, pending: PendingUpload) -> str:
    direct = hub_of(request).storage.presigned_put(pending.staging_key)
    return direct or f"{base_url(request)}/api/v1/uploads/{pending.id}"


@router.put("/uploads/{upload_id}", summary="Receive the bytes of an announced upload")
@upload_route
async def receive(request: Request, upload_id: str) -> dict[str, object]:
    hub = hub_of(request)
    pending = await run_in_threadpool(
        hub.staging.get_pending, upload_id
    )  # the id is the credential
    # never more than the limit, nor more than was announced
    limit = min(hub.settings.max_upload_bytes, pending.size or hub.settings.max_upload_bytes)
    with SpoolDir(hub.settings) as work:
        path = work / "body"
        size, sha256 = await receive_body(request, path, limit)
        if sha256 != pending.sha256:
            raise InvalidPackage(
                f"{pending.filename}: received bytes have sha256 {sha256}, "
                f"announced {pending.sha256}"
            )
        await run_in_threadpool(hub.storage.put_file, pending.staging_key, path)
    await run_in_threadpool(hub.staging.mark_pending, upload_id, "uploaded")
    return {"upload_id": upload_id, "size": size, "sha256": pending.sha256}


def verify_staged(hub: Hub, pending: PendingUpload, work_path: Path) -> ArtifactInfo:
    dest = work_path / pending.id
    # a presigned PUT goes straight to the store, past our streaming cap: check its size
    # there before fetching a byte of it
    stored = hub.storage.size(pending.staging_key)
    if stored is None:
        raise InvalidPackage(f"{pending.filename} was announced but never uploaded")
    if stored > hub.settings.max_upload_bytes:
        hub.storage.delete(pending.staging_key)
        raise TooLarge(
            f"{pending.filename} is {stored} bytes, over the upload limit of "
            f"{hub.settings.max_upload_bytes}"
        )
    try:
        hub.storage.fetch_to_file(pending.staging_key, dest)
    except NotFound as exc:
        raise InvalidPackage(f"{pending.filename} was announced but never uploaded") from exc
    limit = hub.settings.max_uncompressed_bytes
    if dest.stat().st_size > hub.settings.max_upload_bytes:
        raise TooLarge(f"{pending.filename} exceeds the upload limit")
    actual = file_sha256(dest)
    if actual != pending.sha256:
        raise InvalidPackage(
            f"{pending.filename}: stored bytes have sha256 {actual}, announced {pending.sha256}"
        )
    if pending.kind == "source":
        info = validate_source_archive(dest, pending.filename, limit)
    else:
        info = validate_artifact(dest, pending.filename, limit)
    if info.sha256 != pending.sha256:
        raise InvalidPackage(
            f"{pending.filename}: stored bytes have sha256 {info.sha256}, announced {pending.sha256}"
        )
    if pending.size is not None and info.size != pending.size:
        raise InvalidPackage(f"{pending.filename}: size {info.size}, announced {pending.size}")
    return info


def publish_pending(
    hub: Hub,
    principal: Principal,
    env: Environment,
    pendings: list[PendingUpload],
    *,
    description: str | None = None,
    tags: list[str] | None = None,
) -> PublishResult:
    with SpoolDir(hub.settings) as work:
        artifacts = [(verify_staged(hub, p, work), work / p.id) for p in pendings]
        content_hash = next((p.content_hash for p in pendings if p.content_hash), None)
        result = hub.publishing.publish(
            principal,
            env.owner.slug,
            env.name,
            artifacts,
            description=description,
            tags=tags,
            content_hash=content_hash,
        )
    hub.staging.drop_pending(p.id for p in pendings)
    return result
