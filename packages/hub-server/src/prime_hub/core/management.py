"""Changing what is published: yank, edit, delete."""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from ..auth import Principal
from ..db.models import Environment, PendingUpload, Tag, Version
from ..errors import BadRequest, Forbidden, NotFound, Unauthorized
from ..validation import parse_version
from .context import HubContext
from .latest import refresh_latest
from .queries import QueryService
from .upload_rules import clean_tags


class ManagementService:
    """Changing what is published: yank, edit, delete."""

    def __init__(self, ctx: HubContext, queries: QueryService) -> None:
        self.ctx = ctx
        self.queries = queries

    def _env_for_write(
        self, s: Session, principal: Principal, owner: str, name: str
    ) -> Environment:
        env = self.ctx.env_query(s, owner, name)
        if env is None or not principal.can_read(env):
            raise NotFound(f"environment {owner}/{name} not found")
        if principal.user is None:
            raise Unauthorized("this needs an API token")
        if not principal.can_publish(env.owner, env.name):
            raise Forbidden(f"this token may not change {owner}/{name}")
        return env

    def set_yanked(
        self,
        principal: Principal,
        owner: str,
        name: str,
        version: str,
        yanked: bool,
        reason: str = "",
    ) -> Version:
        canonical = str(parse_version(version))
        with self.ctx.db.writer.begin() as s:
            env = self._env_for_write(s, principal, owner, name)
            ver = s.scalar(
                select(Version).where(
                    Version.environment_id == env.id,
                    Version.canonical_version == canonical,
                )
            )
            if ver is None:
                raise NotFound(f"version {version} of {owner}/{name} not found")
            ver.yanked = yanked
            ver.yanked_reason = reason if yanked else ""
            env.updated_at = self.ctx.clock()
            refresh_latest(s, env.id)
            self.ctx.bump(s)
        self.ctx.changed()
        return ver

    def update_environment(
        self,
        principal: Principal,
        owner: str,
        name: str,
        *,
        visibility: str | None = None,
        description: str | None = None,
        tags: list[str] | None = None,
        readme: str | None = None,
    ) -> Environment:
        if visibility is not None and visibility.lower() == "public":
            # going public registers the name for every install through the hub: the
            # publish-time name policy applies now (outside the write transaction)
            with self.ctx.db.reader() as s:
                env = self._env_for_write(s, principal, owner, name)
                going_public, env_name = env.visibility != "public", env.name
            if going_public:
                self.ctx.upstream_names.check_new_name(env_name)
        with self.ctx.db.writer.begin() as s:
            env = self._env_for_write(s, principal, owner, name)
            if visibility is not None:
                if visibility.lower() not in ("public", "private"):
                    raise BadRequest("visibility is public or private")
                env.visibility = visibility.lower()
            if description is not None:
                env.description = description
            if readme is not None:
                env.readme = readme
                env.readme_content_type = "text/markdown"
            if tags is not None:
                env.tags = [Tag(environment_id=env.id, tag=t) for t in clean_tags(tags)]
            env.updated_at = self.ctx.clock()
            self.ctx.bump(s)
            s.flush()
            s.refresh(env)
        self.ctx.changed()
        return env

    def delete_version(self, principal: Principal, owner: str, name: str, ref: str) -> Version:
        env = self.queries.get_environment(principal, owner, name)
        target = self.queries.find_version(env, ref)
        with self.ctx.db.writer.begin() as s:
            env = self._env_for_write(s, principal, owner, name)
            ver = s.get(Version, target.id)
            if ver is None:
                raise NotFound(f"version {ref} not found")
            s.delete(ver)  # files go with it; used_filenames keeps their names taken
            env.updated_at = self.ctx.clock()
            refresh_latest(s, env.id)
            self.ctx.bump(s)
        self.ctx.changed()
        return target

    def delete_environment(self, principal: Principal, owner: str, name: str) -> None:
        with self.ctx.db.writer.begin() as s:
            env = self._env_for_write(s, principal, owner, name)
            s.execute(delete(PendingUpload).where(PendingUpload.environment_id == env.id))
            s.delete(env)
            self.ctx.bump(s)
        self.ctx.changed()
