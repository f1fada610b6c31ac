"""The registry's operations, independent of HTTP: accounts, tokens, publishing, queries.

Publishing is all-or-nothing: archives are validated and their bytes stored under
content-addressed keys first, then one database transaction creates the version and all of
its files. A crash before the commit leaves at most an unreferenced blob, never a row.
"""

from __future__ import annotations

import datetime as dt
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.version import Version as PkgVersion
from sqlalchemy import delete, func, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from .auth import ROLES, SCOPES, Principal, hash_token, is_expired, new_token
from .counters import DownloadCounter
from .db.engine import Database
from .db.models import (
    Account,
    ApiToken,
    Environment,
    File,
    HubState,
    Membership,
    PendingUpload,
    Tag,
    UsedFilename,
    Version,
    utcnow,
)
from .errors import BadRequest, Conflict, Forbidden, InvalidPackage, NotFound, Unauthorized
from .names import normalize, validate_project_name, validate_slug
from .settings import Settings
from .storage import Storage
from .storage.base import blob_key
from .validation import ArtifactInfo, parse_version


def _latest_of(versions: Iterable[Any], include_prereleases: bool) -> Any:
    """The latest-version rule, for anything with ``.version`` and ``.yanked``: yanked
    versions never count; the newest final release (PEP 440 order) wins; with no final
    release, the newest pre-release if ``include_prereleases``; among equal versions, the
    first given."""
    live = sorted(
        (v for v in versions if not v.yanked), key=lambda v: PkgVersion(v.version), reverse=True
    )
    finals = [v for v in live if not PkgVersion(v.version).is_prerelease]
    pool = finals or (live if include_prereleases else [])
    return pool[0] if pool else None


@dataclass(frozen=True)
class IndexData:
    owner: str
    name: str
    normalized_name: str
    rows: list[Any]  # version, yanked, yanked_reason, filename, kind, sha256, size, ...


@dataclass(frozen=True)
class DownloadInfo:
    id: int
    environment_id: int
    filename: str
    kind: str
    sha256: str
    size: int
    storage_key: str
    metadata_sha256: str | None


@dataclass
class PublishResult:
    environment: Environment
    version: Version
    created: bool
    added_files: list[str] = field(default_factory=list)


def _clean_tags(tags: Iterable[str]) -> list[str]:
    out = []
    for t in tags:
        t = t.strip().lower()
        if t and len(t) <= 50 and t not in out:
            out.append(t)
    return out[:20]


class Hub:
    def __init__(self, settings: Settings, db: Database, storage: Storage) -> None:
        self.settings = settings
        self.db = db
        self.storage = storage
        self.on_change: list[Callable[[], None]] = []
        self.downloads = DownloadCounter(self.record_downloads)

    def _changed(self) -> None:
        for cb in self.on_change:
            cb()

    @staticmethod
    def _bump(s: Session) -> None:
        """Within a write transaction: tell other processes their caches are stale."""
        s.execute(
            update(HubState).where(HubState.id == 1).values(generation=HubState.generation + 1)
        )

    def generation(self) -> int:
        with self.db.read_engine.connect() as conn:
            return conn.execute(select(HubState.generation).where(HubState.id == 1)).scalar() or 0

    # ----------------------------------------------------------------- accounts / tokens
    def create_user(self, slug: str, email: str | None = None, admin: bool = False) -> Account:
        validate_slug(slug)
        with self.db.writer.begin() as s:
            if s.scalar(select(Account).where(Account.slug == slug)):
                raise Conflict(f"the name {slug!r} is taken")
            acct = Account(slug=slug, kind="user", email=email, is_admin=admin, display_name=slug)
            s.add(acct)
        return acct

    def create_org(self, slug: str, owner: str) -> Account:
        validate_slug(slug)
        with self.db.writer.begin() as s:
            if s.scalar(select(Account).where(Account.slug == slug)):
                raise Conflict(f"the name {slug!r} is taken")
            user = self._account(s, owner, kind="user")
            org = Account(slug=slug, kind="org", display_name=slug, is_admin=False)
            s.add(org)
            s.flush()
            s.add(Membership(org_id=org.id, user_id=user.id, role="owner"))
        return org

    def _check_org_owner(self, by: Principal, org: Account) -> None:
        if by.user is None:
            raise Unauthorized("managing members needs an API token")
        tok = by.token
        if by.role_in(org) != "owner" or tok is None or tok.scope != "publish" or tok.environment:
            raise Forbidden(
                f"only an owner of {org.slug}, with an unrestricted publish token, manages members"
            )

    def set_member(
        self, org: str, user: str, role: str | None, by: Principal | None = None
    ) -> None:
        """Add, change (role) or remove (None) a member; ``by`` None means the admin CLI."""
        if role is not None and role not in ROLES:
            raise BadRequest(f"role must be one of {', '.join(ROLES)}")
        with self.db.writer.begin() as s:
            o = self._account(s, org, kind="org")
            if by is not None:
                self._check_org_owner(by, o)
            u = self._account(s, user, kind="user")
            s.execute(
                delete(Membership).where(Membership.org_id == o.id, Membership.user_id == u.id)
            )
            if role is not None:
                s.add(Membership(org_id=o.id, user_id=u.id, role=role))

    def members(self, principal: Principal, org: str) -> list[tuple[str, str]]:
        with self.db.reader() as s:
            o = self._account(s, org, kind="org")
            if principal.role_in(o) is None:
                raise NotFound(f"no org named {org!r}")
            rows = s.execute(
                select(Account.slug, Membership.role)
                .join(Membership, Membership.user_id == Account.id)
                .where(Membership.org_id == o.id)
                .order_by(Account.slug)
            ).all()
        return [(slug, role) for slug, role in rows]

    def create_token(
        self,
        user: str,
        scope: str = "publish",
        environment: str | None = None,
        name: str = "",
        expires_in_days: int | None = None,
    ) -> tuple[ApiToken, str]:
        if scope not in SCOPES:
            raise BadRequest(f"scope must be one of {', '.join(SCOPES)}")
        env_key = None
        if environment:
            owner_slug, sep, env_name = environment.partition("/")
            if not sep:
                raise BadRequest("a token's environment is written owner/name")
            env_key = f"{owner_slug}/{normalize(validate_project_name(env_name))}"
        plain = new_token()
        with self.db.writer.begin() as s:
            u = self._account(s, user, kind="user")
            tok = ApiToken(
                user_id=u.id,
                name=name,
                token_hash=hash_token(plain),
                scope=scope,
                environment=env_key,
                expires_at=(
                    utcnow() + dt.timedelta(days=expires_in_days) if expires_in_days else None
                ),
            )
            s.add(tok)
        return tok, plain

    def revoke_token(self, token_id: int, by: Principal | None = None) -> None:
        with self.db.writer.begin() as s:
            tok = s.get(ApiToken, token_id)
            if tok is None or (by is not None and not by.is_admin and by.user.id != tok.user_id):  # type: ignore[union-attr]
                raise NotFound("no such token")
            tok.revoked_at = utcnow()

    def list_tokens(self, user: str) -> list[ApiToken]:
        with self.db.reader() as s:
            u = self._account(s, user, kind="user")
            return list(s.scalars(select(ApiToken).where(ApiToken.user_id == u.id)))

    def authenticate(self, plain: str | None) -> Principal:
        if not plain:
            return Principal()
        with self.db.reader() as s:
            tok = s.scalar(select(ApiToken).where(ApiToken.token_hash == hash_token(plain)))
            if tok is None or tok.revoked_at is not None or is_expired(tok):
                raise Unauthorized("invalid, expired or revoked API token")
            roles = dict(
                s.execute(
                    select(Membership.org_id, Membership.role).where(
                        Membership.user_id == tok.user_id
                    )
                ).all()
            )
            return Principal(user=tok.user, token=tok, memberships=roles)  # type: ignore[arg-type]

    def _account(self, s: Session, slug: str, kind: str | None = None) -> Account:
        acct = s.scalar(select(Account).where(Account.slug == slug))
        if acct is None or (kind is not None and acct.kind != kind):
            raise NotFound(f"no {kind or 'account'} named {slug!r}")
        return acct

    def owner_names(self, principal: Principal) -> list[dict[str, Any]]:
        """The user's own namespace and the organisations they belong to."""
        if principal.user is None:
            return []
        with self.db.reader() as s:
            rows = s.execute(
                select(Account, Membership.role)
                .join(Membership, Membership.org_id == Account.id)
                .where(Membership.user_id == principal.user.id)
            ).all()
        return [
            {"slug": a.slug, "id": a.id, "role": r, "created_at": a.created_at} for a, r in rows
        ]

    # ----------------------------------------------------------------- lookups
    def _env_query(self, s: Session, owner: str, name: str) -> Environment | None:
        return s.scalar(
            select(Environment)
            .join(Account, Environment.owner_id == Account.id)
            .where(Account.slug == owner, Environment.normalized_name == normalize(name))
        )

    def get_environment(self, principal: Principal, owner: str, name: str) -> Environment:
        with self.db.reader() as s:
            env = self._env_query(s, owner, name)
            if env is None or not principal.can_read(env):
                raise NotFound(f"environment {owner}/{name} not found")
            return env

    def get_environment_by_id(self, principal: Principal, env_id: int) -> Environment:
        with self.db.reader() as s:
            env = s.get(Environment, env_id)
            if env is None or not principal.can_read(env):
                raise NotFound(f"environment {env_id} not found")
            return env

    def versions(self, env: Environment) -> list[Version]:
        """Versions newest first (PEP 440 order; equal versions in publishing order)."""
        with self.db.reader() as s:
            vs = list(
                s.scalars(
                    select(Version).where(Version.environment_id == env.id).order_by(Version.id)
                )
            )
        vs.sort(key=lambda v: PkgVersion(v.version), reverse=True)
        return vs

    def latest_version(self, env: Environment, include_prereleases: bool = True) -> Version | None:
        return _latest_of(self.versions(env), include_prereleases)

    def latest_versions(
        self, envs: Iterable[Environment], include_prereleases: bool = True
    ) -> dict[int, Version | None]:
        """``latest_version`` of many environments (a listing page) in two queries in all:
        the version strings of their unyanked versions, then the chosen versions."""
        out: dict[int, Version | None] = {e.id: None for e in envs}
        if not out:
            return out
        with self.db.reader() as s:
            rows = s.execute(
                select(Version.id, Version.environment_id, Version.version, Version.yanked)
                .where(Version.environment_id.in_(out), Version.yanked.is_(False))
                .order_by(Version.id)
            ).all()
            by_env: dict[int, list[Any]] = {}
            for r in rows:
                by_env.setdefault(r.environment_id, []).append(r)
            chosen = [_latest_of(vs, include_prereleases) for vs in by_env.values()]
            ids = [r.id for r in chosen if r is not None]
            if ids:
                for v in s.scalars(select(Version).where(Version.id.in_(ids))):
                    out[v.environment_id] = v
        return out

    def list_environments_with_latest(
        self, principal: Principal, **filters: Any
    ) -> tuple[list[tuple[Environment, Version | None]], int]:
        """A page of ``list_environments``, each environment with its latest version."""
        envs, total = self.list_environments(principal, **filters)
        latest = self.latest_versions(envs)
        return [(e, latest[e.id]) for e in envs], total

    def find_version(self, env: Environment, ref: str) -> Version:
        """``latest``, a PEP 440 version, or a (prefix of a) content hash / sha256."""
        vs = self.versions(env)
        if ref == "latest":
            v = self.latest_version(env)
            if v is None:
                raise NotFound(f"{env.owner.slug}/{env.name} has no published version")
            return v
        try:
            want = PkgVersion(ref)
            for v in vs:
                if PkgVersion(v.version) == want:
                    return v
        except ValueError:
            pass
        if len(ref) >= 8:
            ref_l = ref.lower()
            for v in vs:
                hashes = [v.content_hash or ""] + [f.sha256 for f in v.files]
                if any(h.startswith(ref_l) for h in hashes if h):
                    return v
        raise NotFound(f"version {ref} of {env.owner.slug}/{env.name} not found")

    def list_environments(
        self,
        principal: Principal,
        *,
        search: str | None = None,
        owner: str | None = None,
        tags: list[str] | None = None,
        visibility: str | None = None,
        mine: bool = False,
        sort: str = "created_at",
        order: str = "desc",
        limit: int = 20,
        offset: int = 0,
    ) -> tuple[list[Environment], int]:
        q = select(Environment).join(Account, Environment.owner_id == Account.id)
        # visibility filter in SQL: public, or owned by an account the caller belongs to
        reachable: list[int] = []
        if principal.user is not None:
            reachable = [principal.user.id, *principal.memberships]
            tok = principal.token
            if tok is not None and tok.environment is not None:
                o, _, n = tok.environment.partition("/")
                priv_ok = (Account.slug == o) & (Environment.normalized_name == n)
            else:
                priv_ok = Environment.owner_id.in_(reachable)
            if principal.is_admin and (tok is None or tok.environment is None):
                priv_ok = Environment.id.is_not(None)
            q = q.where(or_(Environment.visibility == "public", priv_ok))
        else:
            q = q.where(Environment.visibility == "public")
        if mine:
            if principal.user is None:
                raise Unauthorized("--mine needs an API token")
            q = q.where(Environment.owner_id.in_(reachable))
        if owner:
            q = q.where(Account.slug == owner)
        if visibility:
            q = q.where(Environment.visibility == visibility.lower())
        if search:
            like = f"%{search.lower()}%"
            q = q.where(
                or_(
                    Environment.normalized_name.like(like),
                    func.lower(Environment.description).like(like),
                    Account.slug.like(like),
                )
            )
        for t in _clean_tags(tags or []):
            q = q.where(Environment.id.in_(select(Tag.environment_id).where(Tag.tag == t)))
        sort_col = {
            "name": Environment.normalized_name,
            "created_at": Environment.created_at,
            "updated_at": Environment.updated_at,
            "downloads": Environment.downloads,
            "stars": Environment.downloads,
        }.get(sort, Environment.created_at)
        with self.db.reader() as s:
            total = s.scalar(select(func.count()).select_from(q.subquery())) or 0
            q = q.order_by(sort_col.asc() if order == "asc" else sort_col.desc(), Environment.id)
            items = list(s.scalars(q.limit(max(1, min(limit, 200))).offset(max(0, offset))))
        return items, total

    def index_projects(self, principal: Principal, owner: str | None) -> list[str]:
        with self.db.reader() as s:
            q = select(Environment).join(Account, Environment.owner_id == Account.id)
            if owner:
                q = q.where(Account.slug == owner)
            envs = [e for e in s.scalars(q) if principal.can_read(e)]
        return sorted({e.name if owner else e.normalized_name for e in envs})

    def _env_row(self, conn: Any, principal: Principal, owner: str | None, name: str) -> Any:
        """One lean Core query for (id, name, normalized name, visibility, owner id, slug)."""
        q = (
            select(
                Environment.id,
                Environment.name,
                Environment.normalized_name,
                Environment.visibility,
                Environment.owner_id,
                Account.slug,
            )
            .join(Account, Environment.owner_id == Account.id)
            .where(Environment.normalized_name == normalize(name))
        )
        if owner is not None:
            q = q.where(Account.slug == owner)
        rows = [
            r
            for r in conn.execute(q).all()
            if principal.can_read_parts(r.visibility, r.owner_id, r.slug, r.name)
        ]
        if not rows:
            raise NotFound(f"no environment named {name}" if owner is None else "not found")
        if len(rows) > 1:
            owners = ", ".join(sorted(f"/{r.slug}/simple/" for r in rows))
            raise Conflict(
                f"several owners publish {name!r}; install from a per-owner index: {owners}"
            )
        return rows[0]

    def index_data(self, principal: Principal, owner: str | None, name: str) -> IndexData:
        """Everything a project page shows, in two Core queries (the index's hot path)."""
        with self.db.read_engine.connect() as conn:
            env = self._env_row(conn, principal, owner, name)
            rows = conn.execute(
                select(
                    Version.version,
                    Version.yanked,
                    Version.yanked_reason,
                    File.filename,
                    File.kind,
                    File.sha256,
                    File.size,
                    File.uploaded_at,
                    File.requires_python,
                    File.metadata_sha256,
                )
                .join(File, File.version_id == Version.id)
                .where(Version.environment_id == env.id)
            ).all()
        return IndexData(
            owner=env.slug, name=env.name, normalized_name=env.normalized_name, rows=rows
        )

    def file_for_download(
        self, principal: Principal, owner: str, name: str, filename: str
    ) -> DownloadInfo:
        with self.db.read_engine.connect() as conn:
            try:
                env = self._env_row(conn, principal, owner, name)
            except NotFound:
                raise NotFound("file not found") from None
            row = conn.execute(
                select(
                    File.id,
                    File.filename,
                    File.kind,
                    File.sha256,
                    File.size,
                    File.storage_key,
                    File.metadata_sha256,
                ).where(File.environment_id == env.id, File.filename == filename)
            ).first()
        if row is None:
            raise NotFound("file not found")
        return DownloadInfo(environment_id=env.id, **row._asdict())

    def core_metadata(self, file_id: int) -> bytes | None:
        with self.db.read_engine.connect() as conn:
            return conn.execute(select(File.core_metadata).where(File.id == file_id)).scalar()

    def record_downloads(self, batch: dict[tuple[int, int], int]) -> None:
        """Add download counts: {(file id, environment id): n}."""
        per_env: dict[int, int] = {}
        with self.db.writer.begin() as s:
            for (file_id, env_id), n in batch.items():
                s.execute(
                    update(File).where(File.id == file_id).values(downloads=File.downloads + n)
                )
                per_env[env_id] = per_env.get(env_id, 0) + n
            for env_id, n in per_env.items():
                s.execute(
                    update(Environment)
                    .where(Environment.id == env_id)
                    .values(downloads=Environment.downloads + n)
                )

    # ----------------------------------------------------------------- publishing
    def _owner_for_publish(
        self, s: Session, principal: Principal, owner: str, name: str
    ) -> Account:
        if principal.user is None:
            raise Unauthorized("publishing needs an API token")
        acct = s.scalar(select(Account).where(Account.slug == owner))
        if acct is None:
            raise NotFound(f"no owner named {owner!r}")
        if not principal.can_publish(acct, name):
            raise Forbidden(
                f"this token may not publish to {owner}/{name} "
                "(needs the publish scope, for this environment, and a publisher role)"
            )
        return acct

    def ensure_environment(
        self,
        principal: Principal,
        owner: str,
        name: str,
        visibility: str | None = None,
    ) -> tuple[Environment, bool]:
        validate_project_name(name)
        for _attempt in range(2):
            try:
                with self.db.writer.begin() as s:
                    acct = self._owner_for_publish(s, principal, owner, name)
                    env = self._env_query(s, owner, name)
                    if env is not None:
                        return env, False
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
                    self._bump(s)
                self._changed()
                return env, True
            except IntegrityError:
                continue  # created concurrently: the second pass finds it
        raise Conflict(f"environment {owner}/{name} was created concurrently; retry")

    def store_artifacts(self, staged: list[tuple[ArtifactInfo, Path]]) -> None:
        # always written (never "already there, skip"): a fresh write also renews the
        # object's age, so garbage collection cannot take it before the commit
        for info, path in staged:
            self.storage.put_file(blob_key(info.sha256, info.filename), path)

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
        if not artifacts:
            raise BadRequest("nothing to publish: send a wheel and/or an sdist")
        versions = set()
        for info, _ in artifacts:
            if info.kind in ("wheel", "sdist"):
                if normalize(info.name or "") != normalize(name):
                    raise InvalidPackage(
                        f"{info.filename} is the distribution {info.name!r}, "
                        f"not the environment {name!r}"
                    )
                versions.add(parse_version(info.version or ""))
        if len(versions) > 1:
            raise InvalidPackage("all files of one upload must carry the same version")
        names = [i.filename for i, _ in artifacts]
        if len(set(names)) != len(names):
            raise BadRequest("the same file name was sent twice")
        if not versions:
            raise BadRequest("an upload needs a wheel or an sdist")
        version = versions.pop()
        with self.db.reader() as s:  # fail fast (before storing bytes) on permissions
            self._owner_for_publish(s, principal, owner, name)
        self.store_artifacts(artifacts)
        env, _ = self.ensure_environment(principal, owner, name, visibility)
        for attempt in range(3):
            try:
                result = self._publish_tx(
                    principal, env.id, version, artifacts, description, tags, content_hash
                )
                self._changed()
                return result
            except IntegrityError:
                if attempt == 2:
                    raise Conflict(
                        f"{name} {version} is being published concurrently; retry"
                    ) from None
        raise AssertionError("unreachable")

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
        canonical = str(version)
        uploader = principal.user.id if principal.user else None
        with self.db.writer.begin() as s:
            if not self.db.is_sqlite:  # serialise publishers of one environment
                s.execute(select(Environment.id).where(Environment.id == env_id).with_for_update())
            env = s.get(Environment, env_id)
            if env is None:
                raise NotFound("the environment was deleted during the upload")
            ver = s.scalar(
                select(Version).where(
                    Version.environment_id == env_id, Version.canonical_version == canonical
                )
            )
            created = ver is None
            existing = {f.filename: f for f in ver.files} if ver else {}
            added: list[str] = []
            for info, _ in artifacts:
                old = existing.get(info.filename)
                if old is not None:
                    if old.sha256 != info.sha256:
                        raise Conflict(
                            f"{info.filename} already exists with different content "
                            f"(sha256 {old.sha256[:12]}…); published files are immutable: "
                            "bump the version"
                        )
                    continue
                used = s.get(UsedFilename, (env.owner_id, info.filename))
                if used is not None:
                    raise Conflict(
                        f"{info.filename} was published before and deleted; a file name "
                        "is never reused: bump the version"
                    )
                if (
                    ver is not None
                    and info.kind == "sdist"
                    and any(f.kind == "sdist" for f in ver.files)
                ):
                    raise Conflict(f"{env.name} {version} already has a source distribution")
                added.append(info.filename)
            if ver is not None and not added:
                return PublishResult(env, ver, created=False)
            primary = next((i for i, _ in artifacts if i.kind == "wheel"), None) or next(
                (i for i, _ in artifacts if i.kind == "sdist"), artifacts[0][0]
            )
            if ver is None:
                ver = Version(
                    environment_id=env_id,
                    version=primary.version or canonical,
                    canonical_version=canonical,
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
            for info, _ in artifacts:
                if info.filename not in added:
                    continue
                s.add(
                    File(
                        version_id=ver.id,
                        environment_id=env_id,
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
                s.add(
                    UsedFilename(owner_id=env.owner_id, filename=info.filename, sha256=info.sha256)
                )
            # the newest version describes the environment
            newest = max(
                [
                    PkgVersion(v)
                    for v in s.scalars(
                        select(Version.version).where(Version.environment_id == env_id)
                    )
                ],
                default=version,
            )
            if version >= newest:
                if description is not None:
                    env.description = description
                elif primary.summary:
                    env.description = primary.summary
                if primary.description:
                    env.readme = primary.description
                    env.readme_content_type = primary.description_content_type or "text/plain"
                new_tags = _clean_tags(tags if tags is not None else primary.keywords)
                if new_tags:
                    env.tags = [Tag(environment_id=env_id, tag=t) for t in new_tags]
            env.updated_at = utcnow()
            self._bump(s)
            s.flush()
            s.refresh(ver)
        return PublishResult(env, ver, created=created, added_files=added)

    # ----------------------------------------------------------------- management
    def _env_for_write(
        self, s: Session, principal: Principal, owner: str, name: str
    ) -> Environment:
        env = self._env_query(s, owner, name)
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
        with self.db.writer.begin() as s:
            env = self._env_for_write(s, principal, owner, name)
            ver = s.scalar(
                select(Version).where(
                    Version.environment_id == env.id, Version.canonical_version == canonical
                )
            )
            if ver is None:
                raise NotFound(f"version {version} of {owner}/{name} not found")
            ver.yanked = yanked
            ver.yanked_reason = reason if yanked else ""
            env.updated_at = utcnow()
            self._bump(s)
        self._changed()
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
        with self.db.writer.begin() as s:
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
                env.tags = [Tag(environment_id=env.id, tag=t) for t in _clean_tags(tags)]
            env.updated_at = utcnow()
            self._bump(s)
            s.flush()
            s.refresh(env)
        self._changed()
        return env

    def delete_version(self, principal: Principal, owner: str, name: str, ref: str) -> Version:
        env = self.get_environment(principal, owner, name)
        target = self.find_version(env, ref)
        with self.db.writer.begin() as s:
            env = self._env_for_write(s, principal, owner, name)
            ver = s.get(Version, target.id)
            if ver is None:
                raise NotFound(f"version {ref} not found")
            s.delete(ver)  # files go with it; used_filenames keeps their names taken
            env.updated_at = utcnow()
            self._bump(s)
        self._changed()
        return target

    def delete_environment(self, principal: Principal, owner: str, name: str) -> None:
        with self.db.writer.begin() as s:
            env = self._env_for_write(s, principal, owner, name)
            s.execute(delete(PendingUpload).where(PendingUpload.environment_id == env.id))
            s.delete(env)
            self._bump(s)
        self._changed()

    # ----------------------------------------------------------------- staged (direct) uploads
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
        if size is not None and size > self.settings.max_upload_bytes:
            raise BadRequest(
                f"{filename} is larger than the limit {self.settings.max_upload_bytes}"
            )
        if "/" in filename or "\\" in filename or filename.startswith("."):
            raise InvalidPackage(f"invalid file name {filename!r}")
        parse_version(version)
        uid = secrets.token_urlsafe(24)
        self.expire_pending()
        with self.db.writer.begin() as s:
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
        cutoff = utcnow() - max_age
        with self.db.reader() as s:
            stale = list(
                s.scalars(select(PendingUpload.id).where(PendingUpload.created_at < cutoff))
            )
        if stale:
            self.drop_pending(stale)
        return len(stale)

    def collect_garbage(self, grace: dt.timedelta = dt.timedelta(hours=1)) -> list[str]:
        """Delete stored objects no file row references (left by a crash between storing
        and committing, or by deletions) and stale staging objects. Objects younger than
        ``grace`` are kept: they may belong to an upload that is about to commit."""
        self.expire_pending()
        cutoff = (utcnow() - grace).timestamp()
        with self.db.reader() as s:
            referenced = set(s.scalars(select(File.storage_key)))
            staged = set(s.scalars(select(PendingUpload.staging_key)))
        removed = []
        for prefix, keep in (("blobs/", referenced), ("staging/", staged)):
            for key, modified in list(self.storage.list_keys(prefix)):
                if key not in keep and modified < cutoff:
                    self.storage.delete(key)
                    removed.append(key)
        return removed

    def get_pending(self, upload_id: str) -> PendingUpload:
        with self.db.reader() as s:
            p = s.get(PendingUpload, upload_id)
            if p is None:
                raise NotFound("no such upload")
            return p

    def mark_pending(self, upload_id: str, state: str) -> None:
        with self.db.writer.begin() as s:
            p = s.get(PendingUpload, upload_id)
            if p is None:
                raise NotFound("no such upload")
            p.state = state

    def drop_pending(self, ids: Iterable[str]) -> None:
        ids = list(ids)
        with self.db.writer.begin() as s:
            s.execute(delete(PendingUpload).where(PendingUpload.id.in_(ids)))
        for i in ids:
            try:
                self.storage.delete(f"staging/{i}")
            except Exception:  # a leftover staging object is harmless
                pass

    def pending_for(self, env_id: int, version: str, user_id: int) -> list[PendingUpload]:
        with self.db.reader() as s:
            return list(
                s.scalars(
                    select(PendingUpload).where(
                        PendingUpload.environment_id == env_id,
                        PendingUpload.version == version,
                        PendingUpload.user_id == user_id,
                    )
                )
            )


def _sha(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()
