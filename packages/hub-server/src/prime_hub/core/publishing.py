"""Publishing: validated archives are stored under content-addressed keys first, then one
database transaction creates the version and all of its files. A crash before the commit
leaves at most an unreferenced blob, never a row."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import Version as PkgVersion
from sqlalchemy import select, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ..auth import Principal
from ..db.models import Account, Environment, File, Tag, UsedFilename, Version
from ..errors import Conflict, Forbidden, NotFound
from ..names import normalize, validate_project_name
from ..storage.base import blob_key
from ..validation import ArtifactInfo
from .context import HubContext
from .latest import refresh_latest
from .upload_rules import clean_tags, files_to_add, primary_artifact, version_of_upload

log = logging.getLogger(__name__)


@dataclass
class PublishResult:
    environment: Environment
    version: Version
    created: bool
    added_files: list[str] = field(default_factory=list)


class PublishingService:
    """Publishing versions: the name policy, blob storage and the version's transaction."""

    def __init__(self, ctx: HubContext) -> None:
        self.ctx = ctx

    def _owner_for_publish(
        self, s: Session, principal: Principal, owner: str, name: str | None
    ) -> Account:
        """``owner``'s account, if this token may publish ``owner/name`` there (with no
        ``name``: some environment of ``owner``, before an upload says which)."""
        principal.require_user("publishing needs an API token")
        acct = s.scalar(select(Account).where(Account.slug == owner))
        if acct is None:
            raise NotFound(f"no owner named {owner!r}")
        if name is None:
            if not principal.can_publish_in(acct):
                raise Forbidden(
                    f"this token may not publish to {owner} "
                    "(needs the publish scope, for this owner, and a publisher role)"
                )
        elif not principal.can_publish(acct, name):
            raise Forbidden(
                f"this token may not publish to {owner}/{name} "
                "(needs the publish scope, for this environment, and a publisher role)"
            )
        return acct

    def check_may_upload(self, principal: Principal, owner: str, name: str | None) -> None:
        """Refuse an upload before its body is read: a token that cannot publish to
        ``owner`` (or to ``owner/name`` when the route names it) never gets to send bytes."""
        with self.ctx.db.reader() as s:
            self._owner_for_publish(s, principal, owner, name)

    def ensure_environment(
        self,
        principal: Principal,
        owner: str,
        name: str,
        visibility: str | None = None,
    ) -> tuple[Environment, bool]:
        validate_project_name(name)
        self.admit_name(principal, owner, name, visibility)
        for _attempt in range(2):
            try:
                with self.ctx.db.writer.begin() as s:
                    acct = self._owner_for_publish(s, principal, owner, name)
                    env = self.ctx.env_query(s, owner, name)
                    if env is not None:
                        return env, False
                    self._check_single_owner(s, owner, name)
                    env = Environment(
                        owner_id=acct.id,
                        name=name,
                        normalized_name=normalize(name),
                        visibility=(visibility or "public").lower(),
                        description="",
                        readme="",
                    )
                    s.add(env)
                    s.flush()
                    env.owner = acct
                    self.ctx.bump(s)
                self.ctx.changed()
                return env, True
            except IntegrityError:
                continue  # created concurrently: the second pass finds it
        raise Conflict(f"environment {owner}/{name} was created concurrently; retry")

    def admit_name(
        self, principal: Principal, owner: str, name: str, visibility: str | None = None
    ) -> None:
        """The publish-time name policy (``name_policy``), for a public environment this
        upload would create: an existing environment keeps publishing versions, and a private
        one is checked when it is made public (``update_environment``), so a private name
        never goes upstream. Asked outside any write transaction (it may wait on the
        upstream index), and only for a caller who may publish there."""
        validate_project_name(name)  # only a valid (ASCII) name is ever sent upstream
        with self.ctx.db.reader() as s:
            self._owner_for_publish(s, principal, owner, name)
            if self.ctx.env_query(s, owner, name) is not None:
                return
        if (visibility or "public").lower() != "private":
            self.ctx.upstream_names.check_new_name(name)

    def _check_single_owner(self, s: Session, owner: str, name: str) -> None:
        """A name only the hub serves (``local_only_names``, e.g. the SDK) is resolved from
        the hub alone, so a second owner's copy would make it ambiguous on every index and
        break every install of it: the first publisher keeps it hub-wide."""
        norm = normalize(name)
        if norm not in {normalize(n) for n in self.ctx.settings.local_only_names}:
            return
        holder = s.scalar(
            select(Account.slug)
            .join(Environment, Environment.owner_id == Account.id)
            .where(Environment.normalized_name == norm, Account.slug != owner)
        )
        if holder is not None:
            raise Conflict(
                f"{name!r} is published on this hub by {holder}: the hub serves it only from "
                "itself, so it has one owner hub-wide"
            )

    def store_artifacts(self, staged: list[tuple[ArtifactInfo, Path]]) -> None:
        # always written (never "already there, skip"): a fresh write also renews the
        # object's age, so garbage collection cannot take it before the commit
        for info, path in staged:
            self.ctx.storage.put_file(blob_key(info.sha256, info.filename), path)

    def publish(
        self,
        principal: Principal,
        owner: str,
        name: str,
        artifacts: list[tuple[ArtifactInfo, Path]],
        *,
        visibility: str | None = None,
        description: str | None = None,
        tags: list[str] | None = None,
        content_hash: str | None = None,
    ) -> PublishResult:
        """Publish one version made of ``artifacts`` (validated files on local disk)."""
        validate_project_name(name)
        version = version_of_upload(name, [info for info, _ in artifacts])
        # fail fast (before storing bytes) on permissions and on a name the hub may not take
        self.admit_name(principal, owner, name, visibility)
        try:
            self.store_artifacts(artifacts)
            env, _ = self.ensure_environment(principal, owner, name, visibility)
            for attempt in range(3):
                try:
                    result = self._publish_tx(
                        principal,
                        env.id,
                        version,
                        artifacts,
                        description,
                        tags,
                        content_hash,
                    )
                    self.ctx.changed()
                    return result
                except IntegrityError:
                    if attempt == 2:
                        raise Conflict(
                            f"{name} {version} is being published concurrently; retry"
                        ) from None
            raise AssertionError("unreachable")
        except BaseException:
            # the loser of a concurrent push (or any failed publish) takes its blobs with it
            # at once instead of leaving them to garbage collection
            self.discard_blobs({blob_key(i.sha256, i.filename) for i, _ in artifacts})
            raise

    def _lock_blobs(self, s: Session, keys: Iterable[str]) -> None:
        """Within a write transaction: exclude every other transaction that holds one of
        ``keys``, until this one ends. A publisher checks its blobs exist and commits under
        these locks, and a failed publisher deletes only under them, so a blob shared by
        identical bytes is never deleted between another publisher's check and commit."""
        if self.ctx.db.is_sqlite:
            return  # BEGIN IMMEDIATE already serialises every write transaction
        for key in sorted(set(keys)):  # one order for all: no deadlock between publishers
            s.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _lock_id(key)})

    def discard_blobs(self, keys: set[str]) -> None:
        """Delete the blobs under ``keys`` that no committed file references."""
        if not keys:
            return
        try:
            with self.ctx.db.writer.begin() as s:
                self._lock_blobs(s, keys)
                used = set(s.scalars(select(File.storage_key).where(File.storage_key.in_(keys))))
                for key in sorted(keys - used):
                    self.ctx.storage.delete(key)
        except Exception:  # the store or database is down: garbage collection takes them later
            log.warning("could not discard the blobs of a failed publish", exc_info=True)

    def _publish_tx(
        self,
        principal: Principal,
        env_id: int,
        version: PkgVersion,
        artifacts: list[tuple[ArtifactInfo, Path]],
        description: str | None,
        tags: list[str] | None,
        content_hash: str | None,
    ) -> PublishResult:
        """The version and its new files in one transaction, step by step: lock the
        environment, decide which files are new (`upload_rules.files_to_add`), make sure
        their blobs are stored, write the rows, move the latest pointer, describe."""
        infos = [info for info, _ in artifacts]
        with self.ctx.db.writer.begin() as s:
            env = self._locked_environment(s, env_id)
            ver = s.scalar(
                select(Version).where(
                    Version.environment_id == env_id,
                    Version.canonical_version == str(version),
                )
            )
            added = files_to_add(
                infos,
                published={f.filename: f.sha256 for f in ver.files} if ver else {},
                has_sdist=ver is not None and any(f.kind == "sdist" for f in ver.files),
                used_names=_used_names(s, env.owner_id, [i.filename for i in infos]),
                env_name=env.name,
                version=version,
            )
            if ver is not None and not added:
                return PublishResult(env, ver, created=False)
            self._ensure_blobs(
                s,
                {blob_key(i.sha256, i.filename): p for i, p in artifacts if i.filename in added},
            )
            primary = primary_artifact(infos)
            uploader = principal.user.id if principal.user else None
            created = ver is None
            if ver is None:
                ver = _new_version(s, env_id, version, primary, content_hash, uploader)
            _add_files(s, env, ver, [i for i in infos if i.filename in added], uploader)
            if created:  # a new version may be the latest (files added to one cannot change it)
                refresh_latest(s, env_id)
            _describe(s, env, version, primary, description, tags)
            env.updated_at = self.ctx.clock()
            self.ctx.bump(s)
            s.flush()
            s.refresh(ver)
        return PublishResult(env, ver, created=created, added_files=added)

    def _locked_environment(self, s: Session, env_id: int) -> Environment:
        if not self.ctx.db.is_sqlite:  # serialise publishers of one environment
            s.execute(select(Environment.id).where(Environment.id == env_id).with_for_update())
        env = s.get(Environment, env_id)
        if env is None:
            raise NotFound("the environment was deleted during the upload")
        return env

    def _ensure_blobs(self, s: Session, new_blobs: dict[str, Path]) -> None:
        """Under the blobs' locks: each new file's blob is in the store (a failed publisher
        of the same bytes may have discarded it since this upload stored it)."""
        self._lock_blobs(s, new_blobs)
        for key, path in new_blobs.items():
            if not self.ctx.storage.exists(key):
                self.ctx.storage.put_file(key, path)


def _used_names(s: Session, owner_id: int, filenames: list[str]) -> set[str]:
    """Which of ``filenames`` the owner published before (deleted files keep their names)."""
    return set(
        s.scalars(
            select(UsedFilename.filename).where(
                UsedFilename.owner_id == owner_id, UsedFilename.filename.in_(filenames)
            )
        )
    )


def _new_version(
    s: Session,
    env_id: int,
    version: PkgVersion,
    primary: ArtifactInfo,
    content_hash: str | None,
    uploader: int | None,
) -> Version:
    ver = Version(
        environment_id=env_id,
        version=primary.version or str(version),
        canonical_version=str(version),
        summary=primary.summary,
        requires_python=primary.requires_python,
        dependencies=primary.requires_dist,
        content_hash=content_hash,
        uploader_id=uploader,
        yanked=False,
        yanked_reason="",
    )
    s.add(ver)
    s.flush()
    return ver


def _add_files(
    s: Session,
    env: Environment,
    ver: Version,
    infos: list[ArtifactInfo],
    uploader: int | None,
) -> None:
    """The file rows, and each name recorded as used by the owner for good."""
    for info in infos:
        s.add(
            File(
                version_id=ver.id,
                environment_id=env.id,
                filename=info.filename,
                kind=info.kind,
                sha256=info.sha256,
                size=info.size,
                storage_key=blob_key(info.sha256, info.filename),
                requires_python=info.requires_python,
                core_metadata=info.core_metadata,
                metadata_sha256=(
                    _sha(info.core_metadata) if info.core_metadata is not None else None
                ),
                uploader_id=uploader,
                downloads=0,
            )
        )
        s.add(UsedFilename(owner_id=env.owner_id, filename=info.filename, sha256=info.sha256))


def _describe(
    s: Session,
    env: Environment,
    version: PkgVersion,
    primary: ArtifactInfo,
    description: str | None,
    tags: list[str] | None,
) -> None:
    """The newest version describes the environment (description, README, tags)."""
    newest = max(
        [
            PkgVersion(v)
            for v in s.scalars(select(Version.version).where(Version.environment_id == env.id))
        ],
        default=version,
    )
    if version < newest:
        return
    if description is not None:
        env.description = description
    elif primary.summary:
        env.description = primary.summary
    if primary.description:
        env.readme = primary.description
        env.readme_content_type = primary.description_content_type or "text/plain"
    new_tags = clean_tags(tags if tags is not None else primary.keywords)
    if new_tags:
        env.tags = [Tag(environment_id=env.id, tag=t) for t in new_tags]


def _lock_id(key: str) -> int:
    """A signed 64-bit advisory-lock id for a storage key."""
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big", signed=True)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
