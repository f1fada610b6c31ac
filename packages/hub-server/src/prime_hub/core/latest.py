"""The stored latest-version pointer (``environments.latest_version_id``).

Listings show each environment's latest version. Finding it from the versions means loading
and PEP 440-parsing every version string of every listed environment (100 versions x 200
environments per page: 20,000 parses); instead every write that changes an environment's
versions (publish, yank, unyank, delete) recomputes that one environment's pointer inside
its own transaction, and listings read the pointer. The rule is `_latest_of`'s, with
pre-releases counted when nothing final is left (as ``latest_version`` defaults to).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, TypeVar

from packaging.version import Version as PkgVersion
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from ..db.models import Environment, Version


class _Versioned(Protocol):
    """A version row or object: what the latest-version rule reads."""

    @property
    def version(self) -> str: ...

    @property
    def yanked(self) -> bool: ...


_V = TypeVar("_V", bound=_Versioned)


def _latest_of(versions: Iterable[_V], include_prereleases: bool) -> _V | None:
    """The latest-version rule, for anything with ``.version`` and ``.yanked``: yanked
    versions never count; the newest final release (PEP 440 order) wins; with no final
    release, the newest pre-release if ``include_prereleases``; among equal versions, the
    first given."""
    live = sorted(
        (v for v in versions if not v.yanked),
        key=lambda v: PkgVersion(v.version),
        reverse=True,
    )
    finals = [v for v in live if not PkgVersion(v.version).is_prerelease]
    pool = finals or (live if include_prereleases else [])
    return pool[0] if pool else None


def latest_version_id(s: Session, env_id: int) -> int | None:
    """The id of ``env_id``'s latest version as the session sees it now."""
    rows = s.execute(
        select(Version.id, Version.version, Version.yanked)
        .where(Version.environment_id == env_id)
        .order_by(Version.id)  # among equal versions the first published wins
    ).all()
    chosen = _latest_of(rows, include_prereleases=True)
    return None if chosen is None else chosen.id


def refresh_latest(s: Session, env_id: int) -> int | None:
    """Within a write transaction that changed ``env_id``'s versions: recompute and store
    its pointer. The environment row is locked first (PostgreSQL; SQLite has one writer), so
    two writers on one environment each read the other's committed versions, never a
    snapshot from before it, and the last to commit stores a pointer that counts both."""
    s.flush()  # the caller's version changes take part in the choice
    s.execute(select(Environment.id).where(Environment.id == env_id).with_for_update())
    chosen = latest_version_id(s, env_id)
    s.execute(
        update(Environment)
        .where(Environment.id == env_id)
        .values(latest_version_id=chosen)
        .execution_options(synchronize_session="evaluate")
    )
    return chosen
