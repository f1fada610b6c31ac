"""A listing rebuilt by the listing cache without the framework (`prime_hub.lean_listings`)
answers exactly what the FastAPI route answers: status, headers and body, for every listing,
viewer and query, including the queries the lean path hands back (bad or ambiguous values,
errors), on SQLite and PostgreSQL.

Two ASGI stacks over the same hub: the served one (`create_asgi`: the cache layer in front)
and the bare FastAPI application (`create_app`: every request through routing and validation).
Each query string is new to the cache, so the served stack builds it, through the lean path
once the path is known.
"""

from __future__ import annotations

import itertools

import pytest
from fastapi import APIRouter, Query, Response
from prime_hub_testkit import make_wheel, publish
from starlette.testclient import TestClient

from prime_hub.app import create_app, create_asgi
from prime_hub.lean_listings import _params_of, listing_route, parse_query
from prime_hub.listing_cache import ListingCache

_fresh = itertools.count()


def _population(server, uid: str) -> dict[str, object]:  # type: ignore[no-untyped-def]
    owner, token = server.new_user()
    member, member_token = server.new_user()
    org = f"o{uid}"
    server.hub.accounts.create_org(org, owner=owner)
    server.hub.accounts.set_member(org, member, "reader")
    specs = [
        (owner, "plain", "1.0.0", ["math"], "public", '<b>Tom & "Jerry"</b>'),
        (owner, "pre", "0.2.0b1", ["zeta", "ünï"], "public", "pre-release only"),
        (owner, "secret", "1.0.0", ["private-tag"], "private", "hidden"),
        (org, "orgpriv", "1.0", ["math"], "private", "org private"),
    ]
    for acct, suffix, version, tags, visibility, description in specs:
        name = f"{uid}-{suffix}"
        assert publish(server, token, acct, name, [make_wheel(name, version)]).status_code == 201
        with server.client(token) as c:
            r = c.patch(
                f"/api/v1/environments/{acct}/{name}",
                json={"visibility": visibility, "description": description, "tags": tags},
            )
            assert r.status_code == 200, r.text
    return {"owner": owner, "org": org, "viewers": [None, token, member_token]}


def _queries(uid: str, owner: str, org: str) -> dict[str, list[str]]:
    """Per path: queries the lean path takes, and queries it must hand back."""
    json_common = [
        "",
        f"search={uid}",
        f"owner={owner}&limit=2",
        f"owner={owner}&limit=2&offset=1",
        "tag=math",
        f"search={uid}&tag=math&tag=zeta",
        "search=%C3%BC",  # UTF-8 escapes
        "search=%FF",  # not UTF-8: replaced, as Starlette does
        "search=&owner=",  # empty values
        "visibility=private",
        "unknown=1",
        "limit=0",  # out of bounds: the framework's 422
        "limit=201",
        "limit=%2B5",  # "+5": the framework decides
        "limit=5&limit=6",  # a scalar twice
        "offset=-1",
        "limit=abc",
    ]
    return {
        "/api/v1/environments": [
            *json_common,
            "sort=name&order=asc",
            "sort=downloads",
            "sort=bogus&order=sideways",
            "mine=true",  # anonymous: the framework's 401
            "mine=1",
            "mine=false",
            "mine=yes",  # spelt otherwise: handed back
        ],
        "/api/v1/environmentshub/": [
            *(q.replace("tag=", "tags=") for q in json_common),
            "sort_by=name&sort_order=asc",
            "mine_only=true",
            "starred_only=true",
            "include_teams=false",
            "include_teams=0",
        ],
        "/": [
            "",
            f"q={uid}",
            "tag=math",
            f"q={uid}&tag=math&tag=zeta",
            "page=2",
            "page=0",  # the framework's error page
            "page=x",
            "q=%3Cscript%3E",
            "q=zz-nothing-matches",
        ],
        f"/{owner}": ["", "page=1", "page=2", "page=0", "page=1&page=2"],
        f"/{org}": [""],
        f"/nobody-{uid}": [""],  # 404 page
    }


@pytest.fixture(scope="module")
def stacks(server):  # type: ignore[no-untyped-def]
    """(served, bare) test clients over the server's hub, the cache layer of the first.
    Not entered as context managers: the apps' lifespan would close the shared hub's
    download counter at the end."""
    served_app = create_asgi(server.settings, server.hub)
    layer = served_app.app
    assert isinstance(layer, ListingCache)
    bare_app = create_app(server.settings, server.hub)
    served = TestClient(served_app, raise_server_exceptions=False)
    bare = TestClient(bare_app, raise_server_exceptions=False)
    yield served, bare, layer
    served.close()
    bare.close()


def test_a_lean_rebuild_answers_what_the_route_answers(server, uid, stacks):  # type: ignore[no-untyped-def]
    served, bare, layer = stacks
    pop = _population(server, uid)
    builds = layer.lean_builds
    checked = 0
    for path, queries in _queries(uid, pop["owner"], pop["org"]).items():  # type: ignore[arg-type]
        for token in pop["viewers"]:  # type: ignore[attr-defined]
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            served.get(path, headers=headers)  # the route marks its path a listing
            for query in queries:
                # a query string no earlier request used: the served stack builds it now
                target = f"{path}?{query}&n={next(_fresh)}".replace("?&", "?")
                want = bare.get(target, headers=headers)
                got = served.get(target, headers=headers)
                assert (got.status_code, got.headers.items(), got.content) == (
                    want.status_code,
                    want.headers.items(),
                    want.content,
                ), (target, token is not None)
                checked += 1
    # the comparison ran through the lean path, not only through the framework's fallback
    assert layer.lean_builds - builds > checked // 2, (layer.lean_builds - builds, checked)


def test_the_public_url_is_part_of_the_key(server, uid, stacks):  # type: ignore[no-untyped-def]
    """The same path and query over http and https (a proxy's X-Forwarded-Proto sets the
    scheme) are two responses: each lists its own URLs."""
    served, _bare, _layer = stacks
    owner, token = server.new_user()
    name = f"{uid}-urls"
    assert publish(server, token, owner, name, [make_wheel(name, "1.0.0")]).status_code == 201
    target = f"/api/v1/environments?owner={owner}"
    for _ in range(2):
        for scheme in ("http", "https"):
            r = served.get(f"{scheme}://hub.example{target}")
            assert r.status_code == 200, r.text
            urls = [i for i in r.text.split('"') if i.startswith(("http://", "https://"))]
            assert urls and all(u.startswith(f"{scheme}://hub.example/") for u in urls), urls


def test_the_parser_reads_the_listings_own_declaration() -> None:
    """Types, defaults and bounds come from the keyword-only parameters FastAPI validates; a
    parameter type the lean path cannot read exactly is refused when the listing is defined,
    and so is a positional parameter that is not one of the route's path parameters."""

    def listing(
        hub: object,
        viewer: object,
        owner: str,
        *,
        q: str | None = None,
        tag: list[str] = Query(default=[]),
        mine: bool = False,
        limit: int = Query(default=20, ge=1, le=200),
    ) -> Response: ...

    params = _params_of(listing)
    assert parse_query(params, b"") == {"q": None, "tag": [], "mine": False, "limit": 20}
    assert parse_query(params, b"q=a+b&tag=x&tag=y&mine=1&limit=200&other=z") == {
        "q": "a b",
        "tag": ["x", "y"],
        "mine": True,
        "limit": 200,
    }
    for refused in (b"limit=0", b"limit=201", b"limit=+5", b"limit=5&limit=6", b"mine=on"):
        assert parse_query(params, refused) is None, refused

    def unreadable(hub: object, viewer: object, *, when: float = 0.0) -> Response: ...

    with pytest.raises(TypeError, match="when"):
        _params_of(unreadable)
    with pytest.raises(TypeError, match="positional"):
        listing_route(APIRouter().get("/{owner}"), viewer=lambda r: None)(listing)  # type: ignore[arg-type,return-value]
