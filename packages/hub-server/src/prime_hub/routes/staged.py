"""Direct uploads: the client PUTs bytes to a URL (presigned S3, or this server), then a
finalize call validates the staged bytes and publishes them in one transaction."""

from __future__ import annotations

import hashlib

import anyio
from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool

from ..auth import Principal
from ..db.models import Environment, PendingUpload
from ..deps import WorkDir, base_url, hub_of
from ..errors import InvalidPackage, NotFound, TooLarge
from ..service import Hub, PublishResult
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
async def receive(request: Request, upload_id: str) -> dict[str, object]:
    hub = hub_of(request)
    pending = await run_in_threadpool(hub.get_pending, upload_id)  # the id is the credential
    limit = hub.settings.max_upload_bytes
    with WorkDir(hub) as work:
        path = work / "body"
        digest = hashlib.sha256()
        size = 0
        out = await anyio.open_file(path, "wb")
        try:
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise TooLarge(f"upload exceeds the limit of {limit} bytes")
                digest.update(chunk)
                await out.write(chunk)
        finally:
            await out.aclose()
        if digest.hexdigest() != pending.sha256:
            raise InvalidPackage(
                f"{pending.filename}: received bytes have sha256 {digest.hexdigest()}, "
                f"announced {pending.sha256}"
            )
        await run_in_threadpool(hub.storage.put_file, pending.staging_key, path)
    await run_in_threadpool(hub.mark_pending, upload_id, "uploaded")
    return {"upload_id": upload_id, "size": size, "sha256": pending.sha256}


def verify_staged(hub: Hub, pending: PendingUpload, work_path) -> ArtifactInfo:  # type: ignore[no-untyped-def]
    dest = work_path / pending.id
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
    with WorkDir(hub) as work:
        artifacts = [(verify_staged(hub, p, work), work / p.id) for p in pendings]
        content_hash = next((p.content_hash for p in pendings if p.content_hash), None)
        result = hub.publish(
            principal,
            env.owner.slug,
            env.name,
            artifacts,
            description=description,
            tags=tags,
            content_hash=content_hash,
        )
    hub.drop_pending(p.id for p in pendings)
    return result
