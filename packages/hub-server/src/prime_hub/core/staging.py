"""Staged (direct) uploads: announced files waiting for their bytes and a finalize call."""

from __future__ import annotations

import datetime as dt
import secrets
from collections.abc import Iterable
from typing import Any

from sqlalchemy import delete, select

from ..auth import Principal
from ..db.models import Environment, PendingUpload
from ..errors import Forbidden, NotFound
from ..validation import parse_version
from .context import HubContext
from .upload_rules import check_staged_file


class StagingService:
    """Staged (direct) uploads: announced files waiting for their bytes and a finalize call."""

    def __init__(self, ctx: HubContext) -> None:
        self.ctx = ctx

    def create_pending(
        self,
        principal: Principal,
        env: Environment,
        *,
        kind: str,
        filename: str,
        sha256: str,
        size: int | None,
        version: str,
        content_hash: str | None,
        extra: dict[str, Any],
    ) -> PendingUpload:
        if principal.user is None or not principal.can_publish(env.owner, env.name):
            raise Forbidden(f"this token may not publish to {env.owner.slug}/{env.name}")
        check_staged_file(filename, size, self.ctx.settings.max_upload_bytes)
        parse_version(version)
        uid = secrets.token_urlsafe(24)
        self.expire_pending()
        with self.ctx.db.writer.begin() as s:
            p = PendingUpload(
                id=uid,
                environment_id=env.id,
                user_id=principal.user.id,
                kind=kind,
                filename=filename,
                sha256=sha256.lower(),
                size=size,
                version=version,
                content_hash=content_hash,
                extra=extra,
                staging_key=f"staging/{uid}",
                state="pending",
            )
            s.add(p)
        return p

    def expire_pending(self, max_age: dt.timedelta = dt.timedelta(days=1)) -> int:
        """Forget announced uploads that were never finalized (an abandoned push)."""
        cutoff = self.ctx.clock() - max_age
        with self.ctx.db.reader() as s:
            stale = list(
                s.scalars(select(PendingUpload.id).where(PendingUpload.created_at < cutoff))
            )
        if stale:
            self.drop_pending(stale)
        return len(stale)

    def get_pending(self, upload_id: str) -> PendingUpload:
        with self.ctx.db.reader() as s:
            p = s.get(PendingUpload, upload_id)
            if p is None:
                raise NotFound("no such upload")
            return p

    def mark_pending(self, upload_id: str, state: str) -> None:
        with self.ctx.db.writer.begin() as s:
            p = s.get(PendingUpload, upload_id)
            if p is None:
                raise NotFound("no such upload")
            p.state = state

    def drop_pending(self, ids: Iterable[str]) -> None:
        ids = list(ids)
        with self.ctx.db.writer.begin() as s:
            s.execute(delete(PendingUpload).where(PendingUpload.id.in_(ids)))
        for i in ids:
            try:
                self.ctx.storage.delete(f"staging/{i}")
            except Exception:  # a leftover staging object is harmless
                pass

    def pending_for(self, env_id: int, version: str, user_id: int) -> list[PendingUpload]:
        with self.ctx.db.reader() as s:
            return list(
                s.scalars(
                    select(PendingUpload).where(
                        PendingUpload.environment_id == env_id,
                        PendingUpload.version == version,
                        PendingUpload.user_id == user_id,
                    )
                )
            )
