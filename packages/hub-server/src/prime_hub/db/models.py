"""SQLAlchemy 2 models. The Alembic migrations in ``prime_hub/migrations`` create this schema."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, MappedColumn, mapped_column, relationship


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class Base(DeclarativeBase):
    pass


def _owned_by(parent: str, **kw: Any) -> MappedColumn[Any]:
    """A key to a ``parent`` row that this row belongs to: deleted with it."""
    return mapped_column(ForeignKey(f"{parent}.id", ondelete="CASCADE"), **kw)


def _account_or_null() -> MappedColumn[Any]:
    """A key to the account that did something; unset when that account is deleted."""
    return mapped_column(ForeignKey("accounts.id", ondelete="SET NULL"), nullable=True)


class Account(Base):
    """An owner namespace: a user or an organisation (one slug space)."""

    __tablename__ = "accounts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    slug: Mapped[str] = mapped_column(String(40), unique=True)
    kind: Mapped[str] = mapped_column(String(8))  # "user" | "org"
    display_name: Mapped[str] = mapped_column(String(200), default="")
    email: Mapped[str | None] = mapped_column(String(320), nullable=True)
    is_admin: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Membership(Base):
    """A user's role in an organisation: owner (manage members), publisher, reader."""

    __tablename__ = "memberships"

    org_id: Mapped[int] = _owned_by("accounts", primary_key=True)
    user_id: Mapped[int] = _owned_by("accounts", primary_key=True)
    role: Mapped[str] = mapped_column(String(16))


class ApiToken(Base):
    """A bearer token; only its SHA-256 is stored. Scope: read or publish, all or one env."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = _owned_by("accounts")
    name: Mapped[str] = mapped_column(String(100), default="")
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    scope: Mapped[str] = mapped_column(String(16))  # "read" | "publish"
    environment: Mapped[str | None] = mapped_column(String(200), nullable=True)  # owner/norm-name
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    expires_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    revoked_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # The token that minted this one (None: the admin CLI, or minted before 0004). Revoking a
    # token revokes the tokens minted from it. No foreign key: SQLite cannot add one to an
    # existing table, and a user's tokens (parent and child alike) are only deleted together.
    minted_by_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)

    user: Mapped[Account] = relationship(lazy="joined")


class Environment(Base):
    __tablename__ = "environments"
    __table_args__ = (UniqueConstraint("owner_id", "normalized_name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    owner_id: Mapped[int] = _owned_by("accounts")
    name: Mapped[str] = mapped_column(String(100))
    normalized_name: Mapped[str] = mapped_column(String(100), index=True)
    description: Mapped[str] = mapped_column(Text, default="")
    readme: Mapped[str] = mapped_column(Text, default="")
    readme_content_type: Mapped[str] = mapped_column(String(100), default="text/markdown")
    visibility: Mapped[str] = mapped_column(String(8), default="public")  # public | private
    downloads: Mapped[int] = mapped_column(BigInteger, default=0)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # The version listings show as latest (`core.latest`), kept by every write that changes
    # versions, in its transaction, so that no listing parses version strings. No foreign
    # key: SQLite cannot add one to an existing table, and the upkeep clears it on delete.
    latest_version_id: Mapped[int | None] = mapped_column(Integer, nullable=True)

    owner: Mapped[Account] = relationship(lazy="joined")
    tags: Mapped[list[Tag]] = relationship(
        cascade="all, delete-orphan", lazy="selectin", order_by="Tag.tag"
    )
    versions: Mapped[list[Version]] = relationship(
        back_populates="environment", cascade="all, delete-orphan", lazy="raise"
    )


class Tag(Base):
    __tablename__ = "environment_tags"

    environment_id: Mapped[int] = _owned_by("environments", primary_key=True)
    tag: Mapped[str] = mapped_column(String(50), primary_key=True, index=True)


class Version(Base):
    __tablename__ = "versions"
    __table_args__ = (UniqueConstraint("environment_id", "canonical_version"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    environment_id: Mapped[int] = _owned_by("environments", index=True)
    version: Mapped[str] = mapped_column(String(100))
    canonical_version: Mapped[str] = mapped_column(String(100))
    summary: Mapped[str] = mapped_column(Text, default="")
    requires_python: Mapped[str | None] = mapped_column(String(200), nullable=True)
    dependencies: Mapped[list[Any]] = mapped_column(JSON, default=list)
    content_hash: Mapped[str | None] = mapped_column(String(64), nullable=True)
    uploader_id: Mapped[int | None] = _account_or_null()
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    yanked: Mapped[bool] = mapped_column(Boolean, default=False)
    yanked_reason: Mapped[str] = mapped_column(Text, default="")

    environment: Mapped[Environment] = relationship(back_populates="versions")
    uploader: Mapped[Account | None] = relationship(lazy="joined")
    files: Mapped[list[File]] = relationship(
        back_populates="version",
        cascade="all, delete-orphan",
        lazy="selectin",
        order_by="File.filename",
    )


class File(Base):
    __tablename__ = "files"
    __table_args__ = (UniqueConstraint("environment_id", "filename"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    version_id: Mapped[int] = _owned_by("versions", index=True)
    environment_id: Mapped[int] = _owned_by("environments")
    filename: Mapped[str] = mapped_column(String(300))
    kind: Mapped[str] = mapped_column(String(16))  # wheel | sdist | source
    sha256: Mapped[str] = mapped_column(String(64))
    size: Mapped[int] = mapped_column(BigInteger)
    storage_key: Mapped[str] = mapped_column(String(400))
    requires_python: Mapped[str | None] = mapped_column(String(200), nullable=True)
    core_metadata: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    metadata_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    uploaded_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    uploader_id: Mapped[int | None] = _account_or_null()
    downloads: Mapped[int] = mapped_column(BigInteger, default=0)

    version: Mapped[Version] = relationship(back_populates="files")


class UsedFilename(Base):
    """Every filename ever published under an owner; never deleted, so never reused."""

    __tablename__ = "used_filenames"

    owner_id: Mapped[int] = _owned_by("accounts", primary_key=True)
    filename: Mapped[str] = mapped_column(String(300), primary_key=True)
    sha256: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class PendingUpload(Base):
    """An artifact announced by a client that will PUT it (to us or to presigned S3) later."""

    __tablename__ = "pending_uploads"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    environment_id: Mapped[int] = _owned_by("environments", index=True)
    user_id: Mapped[int] = _owned_by("accounts")
    kind: Mapped[str] = mapped_column(String(16))
    filename: Mapped[str] = mapped_column(String(300))
    sha256: Mapped[str] = mapped_column(String(64))
    size: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    version: Mapped[str] = mapped_column(String(100))
    content_hash: Mapped[str | None] = mapped_column(String(64), nullable=True)
    extra: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    staging_key: Mapped[str] = mapped_column(String(400))
    state: Mapped[str] = mapped_column(String(16), default="pending")  # pending|uploaded
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class HubState(Base):
    """One row: ``generation`` grows with every change that anonymous readers can see, so
    server processes know when their cached index pages are out of date."""

    __tablename__ = "hub_state"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    generation: Mapped[int] = mapped_column(BigInteger, default=0)


class EvalResult(Base):
    """The summary of one evaluation run of an environment version (``prime eval --push``)."""

    __tablename__ = "eval_results"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    environment_id: Mapped[int] = _owned_by("environments", index=True)
    version_id: Mapped[int] = _owned_by("versions", index=True)
    submitter_id: Mapped[int | None] = _account_or_null()
    model: Mapped[str] = mapped_column(String(200), index=True)
    reward_mean: Mapped[float | None] = mapped_column(Float, nullable=True)
    reward_std: Mapped[float | None] = mapped_column(Float, nullable=True)
    num_examples: Mapped[int] = mapped_column(Integer, default=0)
    rollouts_per_example: Mapped[int] = mapped_column(Integer, default=1)
    num_rollouts: Mapped[int] = mapped_column(Integer, default=0)
    num_errors: Mapped[int] = mapped_column(Integer, default=0)
    # Everything else of the summary (sampling and env args, pass@k, metrics, run id, ...).
    details: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # The run's rollouts (results.jsonl, gzip-compressed in the artifact store), once pushed:
    # the storage key, the number of records, uncompressed and stored sizes, and the
    # SHA-256 of the uncompressed records (names the server's local cache of them).
    rollouts_key: Mapped[str | None] = mapped_column(String(400), nullable=True)
    rollouts_count: Mapped[int | None] = mapped_column(Integer, nullable=True)
    rollouts_bytes: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    rollouts_stored_bytes: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    rollouts_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)

    version: Mapped[Version] = relationship(lazy="joined")
    submitter: Mapped[Account | None] = relationship(lazy="joined")
    environment: Mapped[Environment] = relationship(lazy="joined")
