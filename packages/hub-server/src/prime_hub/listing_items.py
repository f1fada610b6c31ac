"""A listing's entries, rendered once per environment state.

A listing after a change (the first request the response cache cannot answer) used to
rebuild every entry of its page: 200 environments' values converted, 200 dicts built and
encoded, or 20 HTML cards rendered, although a change touches one environment. Here an entry
is a pure function of the page query's row (`ListingRow`, the driver's values) and of the
request's constant inputs (the public URL, the pass-through setting), memoised under exactly
those: an environment whose row is unchanged is not rendered again, one whose row changed
(any listed column, its latest version, its tags, its owner's slug) has a new key. Nothing
needs invalidating, and an entry is byte for byte what rendering the row gives.

A JSON listing is its entries' bytes joined inside the envelope orjson would write for the
whole body (compact, no spaces), so the body is the same bytes as encoding it in one go.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import orjson
from sqlalchemy.engine import Dialect

from .core.queries import LatestVersion, ListedEnvironment, ListedOwner, ListedTag, ListingRow
from .db.models import Environment
from .views import environment_view, iso

# entries kept per kind (about 1 KB each with its key): every environment of a hub of a few
# thousand, ~4 MB per kind at most; beyond that the least recently listed are rendered again
MEMO_SIZE = 4_096


class RowDecoder:
    """Turns a `ListingRow` into the values a view renders, for one database dialect: the
    times as the ORM would read them (the column type's own result processor: SQLite's
    text parsed, PostgreSQL's datetimes as they are), the tags in the listing's order."""

    def __init__(self, dialect: Dialect) -> None:
        self.name = dialect.name
        self._time: Callable[[Any], dt.datetime | None] | None = (
            Environment.created_at.type.dialect_impl(dialect).result_processor(dialect, None)
        )
        # PostgreSQL's array comes ordered by its collation; SQLite's in no set order
        self._sort_tags = dialect.name != "postgresql"

    def time(self, raw: Any) -> dt.datetime | None:
        return raw if self._time is None or raw is None else self._time(raw)

    def tags(self, raw: str | None) -> list[str]:
        tags: list[str] = orjson.loads(raw) if raw else []
        return sorted(tags) if self._sort_tags else tags

    def listed(self, row: ListingRow) -> tuple[ListedEnvironment, LatestVersion | None]:
        env = ListedEnvironment(
            id=row.id,
            name=row.name,
            description=row.description,
            visibility=row.visibility,
            downloads=row.downloads,
            created_at=self.time(row.created_at),
            updated_at=self.time(row.updated_at),
            owner=ListedOwner(row.owner),
            tags=[ListedTag(t) for t in self.tags(row.tags)],
        )
        latest = None if row.latest_version is None else LatestVersion(row.latest_version)
        return env, latest


_decoders: dict[str, RowDecoder] = {}


def decoder_for(dialect: Dialect) -> RowDecoder:
    """One decoder per dialect (a memo key: the same object for every request)."""
    d = _decoders.get(dialect.name)
    if d is None:
        d = _decoders.setdefault(dialect.name, RowDecoder(dialect))
    return d


@lru_cache(maxsize=MEMO_SIZE)
def api_entry(decoder: RowDecoder, base: str, pass_through: bool, row: ListingRow) -> bytes:
    """One item of ``/api/v1/environments``, encoded."""
    env, latest = decoder.listed(row)
    return _kept(orjson.dumps(environment_view(base, env, latest, pass_through=pass_through)))


@lru_cache(maxsize=MEMO_SIZE)
def cli_entry(decoder: RowDecoder, row: ListingRow) -> bytes:
    """One item of the CLI's ``/api/v1/environmentshub/``, encoded."""
    env, latest = decoder.listed(row)
    return _kept(orjson.dumps(cli_view(env, latest)))


def _kept(encoded: bytes) -> bytes:
    """A copy of exactly its length: orjson's result keeps its 4 KB working buffer
    allocated, ten times a typical entry, for as long as the memo keeps the entry."""
    return bytes(memoryview(encoded))


def cli_view(env: Any, latest: Any) -> dict[str, Any]:
    """The CLI listing's shape of an environment (an `Environment` or `ListedEnvironment`
    with its latest version)."""
    return {
        "id": str(env.id),
        "owner": {"name": env.owner.slug},
        "name": env.name,
        "description": env.description,
        "visibility": env.visibility.upper(),
        "latest_version": latest.version if latest else None,
        "stars": 0,
        "downloads": env.downloads,
        "updated_at": iso(env.updated_at),
        "created_at": iso(env.created_at),
        "tags": [t.tag for t in env.tags],
    }


def json_listing(list_key: str, entries: Sequence[bytes], tail: Sequence[tuple[str, Any]]) -> bytes:
    """``orjson.dumps({list_key: [the entries' values], **dict(tail)})`` from encoded
    entries: the same bytes, without decoding or re-encoding an entry."""
    parts = [b"{", orjson.dumps(list_key), b":[", b",".join(entries), b"]"]
    for key, value in tail:
        parts += [b",", orjson.dumps(key), b":", orjson.dumps(value)]
    parts.append(b"}")
    return b"".join(parts)
