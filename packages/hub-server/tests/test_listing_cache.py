"""Listings served from memory (`prime_hub.listing_cache`, issue 30 item 3): a change made by
any process sharing the database shows on the very next request, on SQLite and PostgreSQL,
and a page built for one viewer's rights never reaches another viewer.

"Another process" is a second `Hub` over the same database (its own engines and caches;
nothing in the serving process hears of its writes), plus one real second server process.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from prime_hub_testkit import make_wheel, publish, publish_to, statements_sent

from prime_hub.app import build_hub, create_asgi
from prime_hub.auth import Principal
from prime_hub.errors import Unauthorized
from prime_hub.listing_cache import ListingCache, mark_cacheable
from prime_hub.publishing import validate_files
from prime_hub.settings import Settings

LISTINGS = {
    "api": lambda owner: ("/api/v1/environments", {"owner": owner, "limit": "200"}),
    "cli": lambda owner: ("/api/v1/environmentshub/", {"owner": owner, "limit": "200"}),
    "home": lambda owner: ("/", {"q": owner}),
    "owner page": lambda owner: (f"/{owner}", {}),
}


@pytest.fixture(scope="module")
def other_worker(server):  # type: ignore[no-untyped-def]
    """A second hub over the server's database and store: another worker's writes."""
    hub = build_hub(server.settings, migrate=False)
    yield hub
    hub.db.dispose()


def shown(server, listing: str, owner: str, token: str | None = None) -> dict[str, str | None]:  # type: ignore[no-untyped-def]
    """{environment name: latest version} as the listing shows it (pages: names only)."""
    path, params = LISTINGS[listing](owner)
    with server.client(token) as c:
        r = c.get(path, params=params)
    assert r.status_code == 200, r.text
    if listing in ("api", "cli"):
        body = r.json()
        return {i["name"]: i["latest_version"] for i in body.get("items", body.get("data"))}
    return {n: None for n in set(_names_in_page(r.text, owner))}


def _names_in_page(html: str, owner: str) -> list[str]:
    import re

    return re.findall(rf'<a href="/{re.escape(owner)}/([A-Za-z0-9_.-]+)"><strong>', html)


@pytest.mark.parametrize("listing", sorted(LISTINGS))
def test_every_change_by_another_worker_shows_on_the_next_request(
    server, other_worker, uid, listing, tmp_path
):  # type: ignore[no-untyped-def]
    owner, token = server.new_user()
    name = f"{uid}-a"
    assert publish(server, token, owner, name, [make_wheel(name, "1.0.0")]).status_code == 201
    principal = other_worker.accounts.authenticate(token)
    versions = listing in ("api", "cli")
    for _ in range(2):  # the first request to a path lets its route mark it a listing
        assert shown(server, listing, owner) == {name: "1.0.0" if versions else None}
    # the next identical request is served from memory: one statement (the generation)
    with statements_sent(server.hub) as seen:
        shown(server, listing, owner)
    queries = [q for q in seen if q.split()[0].upper() not in ("BEGIN", "COMMIT", "ROLLBACK")]
    assert len(queries) == 1 and "hub_state" in queries[0], seen

    def expect(want: dict[str, str | None]) -> None:
        if not versions:
            want = {n: None for n in want}
        assert shown(server, listing, owner) == want

    fn, data = make_wheel(name, "1.1.0")
    (tmp_path / fn).write_bytes(data)
    other_worker.publishing.publish(
        principal, owner, name, validate_files(other_worker, [(tmp_path / fn, fn)])
    )
    expect({name: "1.1.0"})
    other_worker.management.set_yanked(principal, owner, name, "1.1.0", True, "broken")
    expect({name: "1.0.0"})
    other_worker.management.set_yanked(principal, owner, name, "1.1.0", False, "")
    expect({name: "1.1.0"})
    other_worker.management.delete_version(principal, owner, name, "1.1.0")
    expect({name: "1.0.0"})
    other_worker.management.update_environment(principal, owner, name, visibility="private")
    expect({})
    other_worker.management.update_environment(principal, owner, name, visibility="public")
    expect({name: "1.0.0"})
    other_worker.management.delete_environment(principal, owner, name)
    expect({})


def test_a_publish_through_a_second_server_process_shows_on_the_next_request(server, uid):  # type: ignore[no-untyped-def]
    from test_reliability import _serve

    owner, token = server.new_user()
    assert publish(server, token, owner, uid, [make_wheel(uid, "1.0.0")]).status_code == 201
    for listing in LISTINGS:
        for _ in range(3):  # marked, built, served from memory
            assert set(shown(server, listing, owner)) == {uid}
    proc, url = _serve(server)
    try:
        other = f"{uid}-b"
        r = publish_to(url, token, owner, other, [make_wheel(other, "1.0.0")])
        assert r.status_code == 201, r.text
    finally:
        proc.terminate()
        proc.wait(10)
    for listing in LISTINGS:
        assert set(shown(server, listing, owner)) == {uid, other}, listing


@pytest.mark.parametrize("listing", sorted(LISTINGS))
def test_a_page_built_for_one_viewer_never_reaches_another(server, uid, listing):  # type: ignore[no-untyped-def]
    """Each viewer's request right after the owner's (which filled the cache with the private
    environment listed): strangers, anonymous readers and a token restricted to another
    environment of the same owner see only what their rights allow."""
    owner, token = server.new_user()
    _, stranger_token = server.new_user()
    hidden, public = f"{uid}-hidden", f"{uid}-public"
    for name, visibility in ((hidden, "private"), (public, "public")):
        r = publish(server, token, owner, name, [make_wheel(name, "1.0.0")], visibility=visibility)
        assert r.status_code == 201, r.text
    _, scoped = server.hub.accounts.create_token(owner, "read", environment=f"{owner}/{public}")
    both, only_public = {hidden, public}, {public}
    viewers = [
        (token, both),
        (None, only_public),
        (token, both),
        (stranger_token, only_public),
        (token, both),
        (scoped, only_public),
    ]
    for tok, want in viewers:
        for _ in range(3):  # the path's first request marks it; then a build, then hits
            assert set(shown(server, listing, owner, tok)) == want, (tok, listing)


def test_signed_in_pages_are_not_cached(server):  # type: ignore[no-untyped-def]
    """A page seen with the session cookie embeds its CSRF value: it is built every time."""
    owner, token = server.new_user()
    with server.client() as c:
        c.cookies.set("prime_hub_token", token)
        assert c.get(f"/{owner}").status_code == 200
        with statements_sent(server.hub) as seen:
            assert c.get(f"/{owner}").status_code == 200
    assert any("environments" in q for q in seen), seen


# ------------------------------------------------------------------ the layer in-process
class _App:
    """A listing route stand-in: answers its own counter, marks itself cacheable."""

    def __init__(self, status: int = 200, cookie: bool = False, mark: bool = True) -> None:
        self.calls = 0
        self.status, self.cookie, self.mark = status, cookie, mark

    async def __call__(self, scope, receive, send):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.mark:
            from starlette.requests import Request

            mark_cacheable(Request(scope))
        headers = [(b"content-type", b"text/plain")]
        if self.cookie:
            headers.append((b"set-cookie", b"a=b"))
        await send({"type": "http.response.start", "status": self.status, "headers": headers})
        await send({"type": "http.response.body", "body": str(self.calls).encode()})


def _authenticate(token: str | None) -> Principal:
    raise Unauthorized("no such token")


async def test_layer_keeps_only_marked_complete_ok_responses() -> None:
    for app, cached in (
        (_App(), True),
        (_App(status=404), False),
        (_App(cookie=True), False),
        (_App(mark=False), False),
    ):
        clock, generation = [0.0], [1]
        cache = ListingCache(
            app,
            lambda generation=generation: generation[0],
            _authenticate,
            max_age=10,
            session_cookie="prime_hub_token",
            clock=lambda clock=clock: clock[0],
        )
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(cache),  # type: ignore[arg-type]
            base_url="http://hub",
        ) as c:
            bodies = [(await c.get("/x")).text for _ in range(3)]
            assert bodies == (["1", "2", "2"] if cached else ["1", "2", "3"]), (app.status, bodies)
            if not cached:
                continue
            generation[0] = 2  # a change anywhere
            assert (await c.get("/x")).text == "3"
            clock[0] = 10.0  # older than max_age: download counts may have moved
            assert (await c.get("/x")).text == "4"
            assert (await c.get("/x?a=1")).text == "5"  # another query, another entry
            # a token that does not authenticate is passed to the route, never cached
            bad = {"Authorization": "Bearer nope"}
            assert [(await c.get("/x", headers=bad)).text for _ in range(2)] == ["6", "7"]


async def test_the_loops_counter_read_falls_back_to_a_thread_when_it_cannot_answer() -> None:
    """``generation_now`` (the event loop's read) is used when it answers; when it answers
    None (no connection yet, or a lost one) the blocking read runs in a thread instead, and
    a change seen by either reaches the next request."""
    now: list[int | None] = [None]
    blocking = [1]
    threads: list[str] = []

    def generation() -> int:
        import threading

        threads.append(threading.current_thread().name)
        return blocking[0]

    app = _App()
    cache = ListingCache(
        app,
        generation,
        _authenticate,
        max_age=10,
        session_cookie="prime_hub_token",
        generation_now=lambda: now[0],
    )
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(cache),  # type: ignore[arg-type]
        base_url="http://hub",
    ) as c:
        assert [(await c.get("/x")).text for _ in range(2)] == ["1", "2"]  # learn, then keep
        assert len(threads) == 1  # the second request asked the blocking read
        now[0] = 1  # the loop's read answers from now on: no more threads
        assert [(await c.get("/x")).text for _ in range(2)] == ["2", "2"]
        assert len(threads) == 1
        now[0] = 2  # a change, seen by the loop's read
        assert (await c.get("/x")).text == "3"
        now[0], blocking[0] = None, 3  # its connection lost: the thread's read sees the next
        assert (await c.get("/x")).text == "4"
        assert len(threads) == 2


class _LeanApp(_App):
    """A route that marks its path with a lean build: the build answers with its own count
    and the thread it ran on, or hands the request back (None) for ``?back``."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds  # how long a lean build takes
        self.builds: list[str] = []

    def lean(self, principal: Principal, scope):  # type: ignore[no-untyped-def]
        import threading
        import time

        from starlette.responses import Response

        if scope["query_string"] == b"back":
            return None
        time.sleep(self.seconds)
        self.builds.append(threading.current_thread().name)
        return Response(f"lean {len(self.builds)}", media_type="text/plain")

    async def __call__(self, scope, receive, send):  # type: ignore[no-untyped-def]
        from starlette.requests import Request

        self.calls += 1
        mark_cacheable(Request(scope), lean=self.lean)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": f"route {self.calls}".encode()})


@pytest.mark.parametrize("on_loop", [True, False])
async def test_lean_rebuilds_run_on_the_loop_only_when_measured_cheap(on_loop: bool) -> None:
    """After its route marked the path, a rebuild calls the lean build: in a worker thread
    the first time, then on the event loop while its last build took under
    ``inline_below``; a build that hands back (None) is answered by the route. Where the
    counter is read in a thread (PostgreSQL), the lean build runs in that same call."""
    import threading

    generation = [1]
    app = _LeanApp(seconds=0.0 if on_loop else 0.02)
    wrapped: list[int] = []

    def wrap(inner):  # type: ignore[no-untyped-def]
        wrapped.append(1)
        return inner

    cache = ListingCache(
        app,
        lambda: generation[0],
        _authenticate,
        max_age=10,
        session_cookie="prime_hub_token",
        generation_now=(lambda: generation[0]) if on_loop else None,
        wrap=wrap,
        inline_below=0.01,
    )
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(cache),  # type: ignore[arg-type]
        base_url="http://hub",
    ) as c:
        assert (await c.get("/x")).text == "route 1"  # learns the path and its lean build
        bodies = []
        for g in (1, 2, 3):  # the first build, then one after each change
            generation[0] = g
            bodies.append((await c.get("/x")).text)
            assert (await c.get("/x")).text == bodies[-1]  # the rebuilt response is kept
        assert bodies == ["lean 1", "lean 2", "lean 3"]
        assert cache.lean_builds == 3 and len(wrapped) == 3
        main = threading.current_thread().name
        if on_loop:  # measured cheap after the first: on the loop
            assert app.builds[0] != main and app.builds[1:] == [main, main]
        else:  # too slow for the loop, or a counter read in a thread: never on the loop
            assert main not in app.builds
        generation[0] = 4
        assert (await c.get("/x?back")).text == "route 2"  # handed back: the route answers
        assert cache.lean_builds == 3


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_the_served_app_reads_the_counter_on_the_loop_only_on_sqlite(
    backend: str, database_url: Callable[[str, str], str], tmp_path: Path
) -> None:
    """A PostgreSQL read waits on the network: a database that stops answering (a failover)
    must block a worker thread, never the event loop that also answers health checks."""
    settings = Settings(
        data_dir=tmp_path / "data",
        database_url=database_url(backend, "listing_counter_on_loop"),
        upstream_index_url="",
    )
    hub = build_hub(settings, migrate=True)
    try:
        listings = create_asgi(hub=hub).app
        assert isinstance(listings, ListingCache)
        if backend == "sqlite":
            assert listings.generation_now == hub.db.counter.now
        else:
            assert listings.generation_now is None
    finally:
        hub.db.dispose()
