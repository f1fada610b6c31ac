"""Read-side queries: environments, versions, listings, the index and downloads."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

from packaging.version import Version as PkgVersion
from sqlalchemy import ColumnElement, Text, cast, func, or_, select, type_coerce, update
from sqlalchemy.dialects.postgresql import aggregate_order_by
from sqlalchemy.engine import Dialect
from sqlalchemy.types import NullType

from ..auth import Principal
from ..db.models import Account, Environment, File, Tag, Version
from ..errors import Conflict, NotFound, Unauthorized
from ..names import normalize
from .context import HubContext
from .latest import _latest_of
from .upload_rules import clean_tags


@dataclass(frozen=True)
class IndexData:
    owner: str
    name: str
    normalized_name: str
    rows: Sequence[Any]  # version, yanked, yanked_reason, filename, kind, sha256, size, ...


class ListedOwner(NamedTuple):
    slug: str


class ListedTag(NamedTuple):
    tag: str


class LatestVersion(NamedTuple):
    version: str


class ListedEnvironment(NamedTuple):
    """What a listing shows of an environment (the attribute names of `Environment` and its
    owner and tags, so a view renders either), decoded from a `ListingRow`."""

    id: int
    name: str
    description: str
    visibility: str
    downloads: int
    created_at: Any
    updated_at: Any
    owner: ListedOwner
    tags: list[ListedTag]


class ListingRow(NamedTuple):
    """One environment of a listing's page query, values as the driver returns them (times:
    SQLite's text or PostgreSQL's datetime; tags: a JSON array). Hashable: it is the key
    under which `listing_items` keeps the environment's rendered entry."""

    id: int
    name: str
    description: str
    visibility: str
    downloads: int
    created_at: Any
    updated_at: Any
    owner: str
    latest_version: str | None
    tags: str | None


def _tags_json(dialect: str) -> Any:
    """A correlated subquery: the environment's tags as a JSON array text. PostgreSQL
    orders them in the database (its collation, as the tag query did); SQLite's array is in
    no set order and `listing_items` sorts it (BINARY collation: code point order)."""
    t = Tag.__table__.alias("listed_tags")
    if dialect == "postgresql":
        agg: Any = cast(func.json_agg(aggregate_order_by(t.c.tag, t.c.tag)), Text)
    else:
        agg = func.json_group_array(t.c.tag)
    return (
        select(agg)
        .where(t.c.environment_id == Environment.id)
        .correlate(Environment)
        .scalar_subquery()
    )


def _raw_listing_columns(dialect: str) -> list[Any]:
    """The page query's columns, in `ListingRow`'s order; times typed `NullType` so that
    SQLAlchemy hands them over unconverted (a hit in the rendered-entry memo needs none)."""
    return [
        Environment.id,
        Environment.name,
        Environment.description,
        Environment.visibility,
        Environment.downloads,
        type_coerce(Environment.created_at, NullType()),
        type_coerce(Environment.updated_at, NullType()),
        Account.slug,
        Version.version,
        _tags_json(dialect),
    ]


class DriverStatement(NamedTuple):
    """A statement as its driver runs it: SQL text and parameters in the driver's style,
    compiled once (`Database.read_cursor` runs it). ``names``: for positional parameters,
    the bind names in order, so that `run` can substitute values by name."""

    sql: str
    params: Any
    names: tuple[str, ...] | None = None

    @classmethod
    def of(cls, statement: Any, dialect: Dialect) -> DriverStatement:
        compiled = statement.compile(dialect=dialect, compile_kwargs={"render_postcompile": True})
        params = compiled.construct_params()
        if compiled.positional:
            names = tuple(compiled.positiontup or ())
            return cls(compiled.string, tuple(params[k] for k in names), names)
        return cls(compiled.string, params)

    def run(self, cursor: Any, **values: Any) -> Any:
        """Execute on a driver cursor, bind parameters named in ``values`` replaced."""
        params = self.params
        if values:
            if self.names is None:
                params = {**params, **values}
            else:
                params = tuple(values.get(n, p) for n, p in zip(self.names, params, strict=True))
        cursor.execute(self.sql, params)
        return cursor


@lru_cache(maxsize=64)
def compiled(statement: Any, dialect: Dialect) -> DriverStatement:
    """`DriverStatement.of` once per (module-level) statement and dialect."""
    return DriverStatement.of(statement, dialect)


def listing_rights(principal: Principal) -> tuple[Hashable, ...]:
    """What a listing's visibility filter reads of ``principal`` (`_listing_query`): two
    principals with equal rights see the same listing."""
    if principal.user is None:
        return ("anonymous",)
    tok = principal.token
    return (
        "user",
        principal.user.id,
        tuple(sorted(principal.memberships)),
        bool(principal.is_admin),
        tok.environment if tok is not None else None,
    )


def _page_size(limit: int) -> int:
    return max(1, min(limit, 200))


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


class QueryService:
    """Read-side queries: environments, versions, listings, the index and downloads."""

    def __init__(self, ctx: HubContext) -> None:
        self.ctx = ctx
        # listing_rows' statements by what they depend on (see _listing_statements_for)
        self._listing_statements: dict[
            tuple[Hashable, ...], tuple[DriverStatement, DriverStatement]
        ] = {}

    def get_environment(self, principal: Principal, owner: str, name: str) -> Environment:
        with self.ctx.db.reader() as s:
            env = self.ctx.env_query(s, owner, name)
            if env is None or not principal.can_read(env):
                raise NotFound(f"environment {owner}/{name} not found")
            return env

    def get_environment_by_id(self, principal: Principal, env_id: int) -> Environment:
        with self.ctx.db.reader() as s:
            env = s.get(Environment, env_id)
            if env is None or not principal.can_read(env):
                raise NotFound(f"environment {env_id} not found")
            return env

    def versions(self, env: Environment) -> list[Version]:
        """Versions newest first (PEP 440 order; equal versions in publishing order)."""
        with self.ctx.db.reader() as s:
            vs = list(
                s.scalars(
                    select(Version).where(Version.environment_id == env.id).order_by(Version.id)
                )
            )
        vs.sort(key=lambda v: PkgVersion(v.version), reverse=True)
        return vs

    def latest_version(self, env: Environment, include_prereleases: bool = True) -> Version | None:
        if include_prereleases:
            return self.latest_versions([env])[env.id]
        return _latest_of(self.versions(env), include_prereleases)

    def latest_versions(
        self, envs: Iterable[Environment], include_prereleases: bool = True
    ) -> dict[int, Version | None]:
        """``latest_version`` of many environments in one query: the versions their stored
        pointers name (`core.latest` keeps them), fetched by id, so no version string is
        parsed here. Without pre-releases: from all their versions."""
        envs = list(envs)
        out: dict[int, Version | None] = {e.id: None for e in envs}
        if not include_prereleases:
            for e in envs:
                out[e.id] = _latest_of(self.versions(e), include_prereleases=False)
            return out
        ids = {e.latest_version_id for e in envs if e.latest_version_id is not None}
        if ids:
            with self.ctx.db.reader() as s:
                for v in s.scalars(select(Version).where(Version.id.in_(ids))):
                    out[v.environment_id] = v
        return out

    def listing_rows(
        self,
        principal: Principal,
        *,
        limit: int = 20,
        offset: int = 0,
        cursor: Any = None,
        **filters: Any,
    ) -> tuple[list[ListingRow], int]:
        """A page of ``list_environments`` as the driver returns it: each environment's
        listed columns, its owner, its latest version (through the stored pointer) and its
        tags (a JSON array, from a correlated subquery), in two Core queries (the count and
        the page) with no ORM objects and no per-value conversion. `listing_items` turns a
        row into what a listing shows, and memoises that by the row's values: an unchanged
        environment is rendered once, whatever changed elsewhere. ``cursor``: a
        `Database.read_cursor` the caller holds for its other queries (one checkout, one
        transaction)."""
        key = (
            listing_rights(principal),
            limit,
            offset,
            *((k, tuple(v) if isinstance(v, list) else v) for k, v in sorted(filters.items())),
        )
        statements = self._listing_statements.get(key)
        if statements is None:
            statements = self._listing_statements_for(principal, limit, offset, **filters)
            if len(self._listing_statements) >= 1024:  # searches are unbounded: bound this
                self._listing_statements.clear()
            self._listing_statements[key] = statements
        if cursor is None:
            with self.ctx.db.read_cursor() as own:
                return self._run_listing(own, statements)
        return self._run_listing(cursor, statements)

    @staticmethod
    def _run_listing(
        cursor: Any, statements: tuple[DriverStatement, DriverStatement]
    ) -> tuple[list[ListingRow], int]:
        count, page = statements
        total = count.run(cursor).fetchone()[0] or 0
        rows = list(map(ListingRow._make, page.run(cursor).fetchall()))
        return rows, total

    def _listing_statements_for(
        self, principal: Principal, limit: int, offset: int, **filters: Any
    ) -> tuple[DriverStatement, DriverStatement]:
        """``listing_rows``' two statements (the count, the page), compiled to the driver's
        SQL and parameters. Built once per key: constructing, keying and executing them as
        SQLAlchemy statements cost ~0.8 ms a request, a third of the listing's SQL; what
        they depend on is the key (the viewer's rights, the filters, the page), the
        settings and the dialect, which a `QueryService` never changes. (Their values are
        strings and integers, which every driver takes as they are: no bind processing.)"""
        q, order_by = self._listing_query(principal, **filters)
        # the page's ids first, then their columns, latest versions and tags: a select list
        # with the tags' subquery would be computed for every matching row before the sort
        # (PostgreSQL's cold listing took twice as long that way)
        ids = (
            q.with_only_columns(Environment.id.label("page_id"))
            .order_by(*order_by)
            .limit(_page_size(limit))
            .offset(max(0, offset))
            .subquery("page")
        )
        page = (
            select(*_raw_listing_columns(self.ctx.db.read_engine.dialect.name))
            .select_from(ids)
            .join(Environment, Environment.id == ids.c.page_id)
            .join(Account, Environment.owner_id == Account.id)
            .outerjoin(Version, Version.id == Environment.latest_version_id)
            .order_by(*order_by)  # the same keys, ending with the id: the same order
        )
        dialect = self.ctx.db.read_engine.dialect
        count = select(func.count()).select_from(q.subquery())
        return DriverStatement.of(count, dialect), DriverStatement.of(page, dialect)

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
        self, principal: Principal, *, limit: int = 20, offset: int = 0, **filters: Any
    ) -> tuple[list[Environment], int]:
        """A page of the environments ``principal`` may see that match ``filters`` (the
        keywords of `_listing_query`), as ORM objects, and how many match in all."""
        q, order_by = self._listing_query(principal, **filters)
        with self.ctx.db.reader() as s:
            total = s.scalar(select(func.count()).select_from(q.subquery())) or 0
            q = q.order_by(*order_by).limit(_page_size(limit)).offset(max(0, offset))
            items = list(s.scalars(q))
        return items, total

    def _listing_query(
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
    ) -> tuple[Any, tuple[Any, ...]]:
        """The environments ``principal`` may see that match the filters (a select of
        `Environment` joined to its owner), and the order a page of them is listed in."""
        q = select(Environment).join(Account, Environment.owner_id == Account.id)
        # visibility filter in SQL: public, or owned by an account the caller belongs to
        reachable: list[int] = []
        if principal.user is not None:
            reachable = [principal.user.id, *principal.memberships]
            tok = principal.token
            priv_ok: ColumnElement[bool]
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
        unlisted = sorted({normalize(n) for n in self.ctx.settings.unlisted_names})
        if unlisted:  # libraries (the SDK) are served, not listed as environments
            q = q.where(Environment.normalized_name.not_in(unlisted))
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
        for t in clean_tags(tags or []):
            q = q.where(Environment.id.in_(select(Tag.environment_id).where(Tag.tag == t)))
        sort_col = {
            "name": Environment.normalized_name,
            "created_at": Environment.created_at,
            "updated_at": Environment.updated_at,
            "downloads": Environment.downloads,
            "stars": Environment.downloads,
        }.get(sort, Environment.created_at)
        ordered = sort_col.asc() if order == "asc" else sort_col.desc()
        return q, (ordered, Environment.id)

    def index_projects(self, principal: Principal, owner: str | None) -> list[str]:
        with self.ctx.db.reader() as s:
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
        with self.ctx.db.read_engine.connect() as conn:
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
            owner=env.slug,
            name=env.name,
            normalized_name=env.normalized_name,
            rows=rows,
        )

    def file_for_download(
        self, principal: Principal, owner: str, name: str, filename: str
    ) -> DownloadInfo:
        with self.ctx.db.read_engine.connect() as conn:
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
        with self.ctx.db.read_engine.connect() as conn:
            return conn.execute(select(File.core_metadata).where(File.id == file_id)).scalar()

    def record_downloads(self, batch: dict[tuple[int, int], int]) -> None:
        """Add download counts: {(file id, environment id): n}."""
        per_env: dict[int, int] = {}
        with self.ctx.db.writer.begin() as s:
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
