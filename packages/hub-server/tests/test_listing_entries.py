"""Listings assembled from memoised entries (`prime_hub.listing_items`, issue 30 item 3) are
the bytes an independent rendering gives: environments read as ORM objects (another query
path, the ORM's own time conversion and tag order), each rendered by the view or template
the listing uses, the whole body encoded in one go. Checked for viewers with different
rights, on SQLite and PostgreSQL, and again after every kind of change, so an entry kept
from before a change can never stand in for the changed environment.
"""

from __future__ import annotations

import datetime as dt
import itertools

import orjson
from prime_hub_testkit import make_wheel, publish
from sqlalchemy.dialects import postgresql, sqlite

from prime_hub.auth import Principal
from prime_hub.db.counter import CounterReader
from prime_hub.listing_items import RowDecoder, cli_view, json_listing
from prime_hub.routes.web import templates
from prime_hub.views import environment_view

_fresh = itertools.count()  # a query string no earlier request used: a built response


def _population(server, uid: str) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """An owner's environments with tags (orders where collations could differ), a
    yanked latest version, only pre-releases, nothing installable, a private one; an
    organisation member and an admin besides the anonymous viewer."""
    owner, token = server.new_user()
    member, member_token = server.new_user()
    org = f"o{uid}"
    server.hub.accounts.create_org(org, owner=owner)
    server.hub.accounts.set_member(org, member, "reader")
    admin = f"a{uid}"
    server.hub.accounts.create_user(admin, admin=True)
    _, admin_token = server.hub.accounts.create_token(admin, "read")
    specs = [
        (owner, "plain", ["1.0.0"], [], None, "public", '<b>Tom & "Jerry"</b>'),
        (owner, "pre", ["0.1.0rc1", "0.2.0b1"], ["zeta", "ab-c", "abb", "ünï"], None, "public", ""),
        (owner, "yanked", ["1.0.0", "2.0.0"], ["x,y", "math"], "2.0.0", "public", "y"),
        (owner, "gone", ["1.0.0"], [], "1.0.0", "public", "all yanked"),
        (owner, "secret", ["1.0.0", "1.1.0rc1"], ["private-tag"], None, "private", "hidden"),
        (org, "orgpriv", ["1.0"], ["math"], None, "private", "org private"),
    ]
    for acct, suffix, versions, tags, yank, visibility, description in specs:
        name = f"{uid}-{suffix}"
        for v in versions:
            assert publish(server, token, acct, name, [make_wheel(name, v)]).status_code == 201
        with server.client(token) as c:
            r = c.patch(
                f"/api/v1/environments/{acct}/{name}",
                json={"visibility": visibility, "description": description, "tags": tags},
            )
            assert r.status_code == 200, r.text
            if yank:
                url = f"/api/v1/environments/{acct}/{name}/versions/{yank}/yank"
                assert c.post(url, json={"reason": "bad"}).status_code == 200
    return {
        "owner": owner,
        "org": org,
        "token": token,
        "viewers": {
            "anonymous": None,
            "owner": token,
            "member": member_token,
            "admin": admin_token,
        },
    }


def _reference(server, token: str | None, **filters):  # type: ignore[no-untyped-def]
    """The page as ORM objects with their latest versions, and the total."""
    hub = server.hub
    principal = hub.accounts.authenticate(token) if token else Principal()
    envs, total = hub.queries.list_environments(principal, **filters)
    latest = hub.queries.latest_versions(envs)
    return [(e, latest[e.id]) for e in envs], total


SORTS = (("created_at", "desc"), ("name", "asc"), ("downloads", "desc"))


def _check_json_listings(server, token: str | None, search: str, sorts=SORTS) -> None:  # type: ignore[no-untyped-def]
    base = server.url
    pass_through = server.hub.settings.upstream is not None
    with server.client(token) as c:
        for sort, order in sorts:
            offset = 0
            limit = 200 - next(_fresh) % 190  # a fresh cache key: this response is built now
            page, total = _reference(
                server, token, search=search, sort=sort, order=order, limit=limit, offset=offset
            )
            params = {"search": search, "sort": sort, "order": order}
            r = c.get("/api/v1/environments", params={**params, "limit": limit, "offset": offset})
            assert r.status_code == 200, r.text
            items = [environment_view(base, e, v, pass_through=pass_through) for e, v in page]
            want = {"items": items, "total": total, "limit": limit, "offset": offset}
            assert r.content == orjson.dumps(want)
            r = c.get(
                "/api/v1/environmentshub/",
                params={"search": search, "sort_by": sort, "sort_order": order, "limit": limit,
                        "offset": offset},
            )  # fmt: skip
            assert r.status_code == 200, r.text
            want = {"data": [cli_view(e, v) for e, v in page], "total_count": total}
            assert r.content == orjson.dumps(want)


def _check_pages(server, token: str | None, owner: str, search: str) -> None:  # type: ignore[no-untyped-def]
    entry = templates.env.get_template("_env_entry.html").module.entry  # type: ignore[attr-defined]

    def cards(page) -> str:  # type: ignore[no-untyped-def]
        return '<ul class="env-list">\n' + "".join(f"\n  {entry(e, v)}" for e, v in page)

    with server.client(token) as c:
        r = c.get(f"/{owner}", params={"page": 1, "x": next(_fresh)})
        assert r.status_code == 200, r.text
        page, _ = _reference(server, token, owner=owner, sort="name", order="asc", limit=20)
        assert page and cards(page) + "\n</ul>" in r.text
        r = c.get("/", params={"q": search, "x": next(_fresh)})
        assert r.status_code == 200, r.text
        page, _ = _reference(server, token, search=search, sort="updated_at", limit=20)
        assert page and cards(page) + "\n</ul>" in r.text


def _check_all(server, pop, uid: str, quick: bool = False) -> None:  # type: ignore[no-untyped-def]
    """Every listing for every viewer (``quick``: the owner and anonymous, one order)."""
    for viewer, token in pop["viewers"].items():  # type: ignore[attr-defined]
        if quick and viewer not in ("anonymous", "owner"):
            continue
        _check_json_listings(server, token, uid, SORTS[:1] if quick else SORTS)
        _check_pages(server, token, pop["owner"], uid)


def test_listings_are_the_bytes_of_their_entries_rendered_from_orm_objects(server, uid):  # type: ignore[no-untyped-def]
    pop = _population(server, uid)
    seen = {}
    with server.client(pop["viewers"]["admin"]) as c:  # type: ignore[index]
        for item in c.get("/api/v1/environments", params={"search": uid}).json()["items"]:
            seen[item["name"].removeprefix(f"{uid}-")] = (item["latest_version"], item["tags"])
    # the population is what the listings should show: rights, pointers and tag order
    assert seen == {
        "plain": ("1.0.0", []),
        "pre": ("0.2.0b1", ["ab-c", "abb", "zeta", "ünï"]),
        "yanked": ("1.0.0", ["math", "x,y"]),
        "gone": (None, []),
        "secret": ("1.0.0", ["private-tag"]),
        "orgpriv": ("1.0", ["math"]),
    }
    _check_all(server, pop, uid)


def test_every_kind_of_change_reaches_the_listing_entries(server, uid):  # type: ignore[no-untyped-def]
    pop = _population(server, uid)
    owner, token = pop["owner"], pop["token"]
    name = f"{uid}-plain"
    env_url = f"/api/v1/environments/{owner}/{name}"
    _check_all(server, pop, uid, quick=True)  # every entry memoised before the changes

    def after(change) -> None:  # type: ignore[no-untyped-def]
        r = change()
        assert r is None or r.status_code < 300, r.text
        _check_all(server, pop, uid, quick=True)

    with server.client(token) as c:
        after(lambda: publish(server, token, owner, name, [make_wheel(name, "1.1.0")]))
        after(lambda: c.post(f"{env_url}/versions/1.1.0/yank", json={"reason": "x"}))
        after(lambda: c.post(f"{env_url}/versions/1.1.0/unyank"))
        after(lambda: c.delete(f"{env_url}/versions/1.1.0"))
        after(lambda: c.patch(env_url, json={"description": "changed <i>"}))
        after(lambda: c.patch(env_url, json={"tags": ["new", "math"]}))
        after(lambda: c.patch(env_url, json={"visibility": "private"}))
        after(lambda: c.patch(env_url, json={"visibility": "public"}))
        hub = server.hub
        env_id = hub.queries.get_environment(hub.accounts.authenticate(token), owner, name).id
        # downloads move in batches without a generation bump: a newly built listing shows them
        after(lambda: _add_downloads(hub, env_id, 3))
        after(lambda: c.delete(env_url))


def _add_downloads(hub, env_id: int, n: int) -> None:  # type: ignore[no-untyped-def]
    from sqlalchemy import select

    from prime_hub.db.models import File

    with hub.db.reader() as s:
        file_id = s.scalar(select(File.id).where(File.environment_id == env_id))
    hub.queries.record_downloads({(file_id, env_id): n})


# ------------------------------------------------------------------ pure parts
def test_a_json_listing_joined_from_entries_is_orjsons_encoding_of_the_whole() -> None:
    items = [{"a": 1, "s": 'q"\u00fc\n'}, {"b": [1, 2], "n": None}, {}]
    tail = [("total", 1234), ("limit", 200), ("offset", 0), ("note", "x")]
    joined = json_listing("items", [orjson.dumps(i) for i in items], tail)
    assert joined == orjson.dumps({"items": items, **dict(tail)})
    assert json_listing("data", [], [("total_count", 0)]) == b'{"data":[],"total_count":0}'


def test_sqlite_times_decode_as_the_orm_reads_them() -> None:
    """SQLite keeps times as text; a listing converts them only when it renders an entry,
    with the column type's own processor: what the ORM would have produced."""
    d = RowDecoder(sqlite.dialect())
    assert d.time("2026-01-02 03:04:05.123456") == dt.datetime(2026, 1, 2, 3, 4, 5, 123456)
    assert d.time("2026-01-02 03:04:05.000000") == dt.datetime(2026, 1, 2, 3, 4, 5)
    assert d.time("2026-01-02 03:04:05") == dt.datetime(2026, 1, 2, 3, 4, 5)
    assert d.time(None) is None
    # SQLite's tag array comes in no set order: sorted by code point (its BINARY collation)
    assert d.tags('["zeta","Ab","ab-c","abb"]') == ["Ab", "ab-c", "abb", "zeta"]
    assert d.tags(None) == [] and d.tags("[]") == []
    # PostgreSQL's array is ordered in the database, by its collation: kept as it comes
    assert RowDecoder(postgresql.dialect()).tags('["b","a"]') == ["b", "a"]


def test_the_counter_reader_sees_every_commit_and_survives_a_lost_connection(server):  # type: ignore[no-untyped-def]
    """Its own autocommit connection: each read sees the latest commit (no snapshot kept
    from an earlier read); the loop's read (`now`) never connects, and a broken connection
    is replaced by the next blocking read."""
    hub = server.hub
    reader = CounterReader(hub.db.read_engine)

    def bump() -> None:
        with hub.db.writer.begin() as s:
            hub.queries.ctx.bump(s)

    try:
        assert reader.now() is None  # the event loop's read never connects
        before = reader()
        for n in (1, 2):
            bump()
            assert reader.now() == before + n
        reader._conn.close()  # the connection is lost under it (a database restart)
        bump()
        assert reader.now() is None  # the loop's read gives up; the caller asks a thread
        assert reader() == before + 3
        assert reader.now() == before + 3
    finally:
        reader.close()
