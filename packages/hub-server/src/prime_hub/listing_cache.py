"""Listings served from memory until the database's change counter moves.

A listing (the JSON API's ``/api/v1/environments``, the CLI's ``/api/v1/environmentshub/``,
the pages ``/`` and ``/<owner>``) costs a few queries plus building and rendering 20-200
items; the same request answered again before anything changed is the same bytes. This ASGI
layer keeps the complete response (status, headers, body) a listing route produced, keyed by
what the route's answer depends on: the path, the query string, the Host (absolute URLs) and
the viewer's rights, and serves it again while the database's generation (`HubState`, bumped
inside every publish, yank, unyank, delete and visibility, description or tag change) is the
one it was built at. The generation is read on every request, so a change made by any
process sharing the database is visible on the next request; an entry also expires after
``max_age`` seconds, as download counts (batched, no generation bump) may move.

Rights: an anonymous request's key is ``anonymous``; a request with an API token is keyed by
what the listing query reads of its principal (user id, memberships, admin flag, the token's
environment restriction), so one viewer never receives a page built for other rights. A
request carrying the web session cookie is not cached (its pages embed its CSRF value), nor is
one whose token does not authenticate (the route answers its error).

Only responses whose route opted in (`mark_cacheable`) with status 200 and no Set-Cookie are
kept; other paths pass through untouched (and never pay the generation read). A route may mark
its path with a lean build (`lean_listings`): the same listing as a plain function, which this
layer then calls directly to rebuild the response after a change (in a worker thread, or on
the event loop where its last build was measured cheap), instead of going through the
framework's routing and validation again.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Hashable, MutableMapping
from dataclasses import dataclass
from typing import Any

import anyio.to_thread

from .auth import Principal, token_from_header
from .core.queries import listing_rights
from .errors import HubError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Any, Any], Awaitable[None]]

_STATE_FLAG = "prime_hub.listing_cacheable"

# a listing built without the framework: (the cache's principal, the request's scope) -> the
# response, or None to let the framework answer (blocking; `lean_listings.LeanListing.lean`)
LeanBuild = Callable[[Principal, Scope], Any]


def mark_cacheable(request: Any, lean: LeanBuild | None = None) -> None:
    """Called by a listing route: its response depends only on the cache key's parts and the
    database's contents, so `ListingCache` may serve it again until the next change; with
    ``lean``, the cache rebuilds this path's responses by calling it (for any query string:
    it hands back what it cannot parse exactly as the route would)."""
    request.scope.setdefault("state", {})[_STATE_FLAG] = lean or True


@dataclass(frozen=True)
class CachedResponse:
    generation: int
    built_at: float
    status: int
    headers: list[tuple[bytes, bytes]]
    body: bytes
    build_seconds: float = float("inf")  # a lean build's time; the framework's: unmeasured


def _timed(lean: LeanBuild, principal: Principal, scope: Scope) -> tuple[Any, float]:
    t = time.perf_counter()
    response = lean(principal, scope)
    return response, time.perf_counter() - t


class ListingCache:
    """The ASGI layer (see the module's docstring). ``generation`` and ``authenticate`` are
    the hub's (blocking; run in a worker thread); ``generation_now``, when given, is tried
    first on the event loop: a quick read that answers None rather than wait (a thread hop
    costs more than the read: `db.counter.CounterReader.now`); ``session_cookie`` names the
    web sign-in cookie; ``wrap`` is the middleware the framework's responses pass through
    after this layer's app (a lean response is sent through it too: the same headers).

    A lean rebuild runs in a worker thread, except where ``inline_below`` (seconds) is set
    and the same key's last lean build took less: then on the event loop, as a thread hop's
    two wake-ups cost a few hundred microseconds, as much as such a build. Only for a
    database read from a local file (SQLite), where a read never waits on a network."""

    def __init__(
        self,
        app: ASGIApp,
        generation: Callable[[], int],
        authenticate: Callable[[str | None], Principal],
        max_age: float,
        session_cookie: str,
        max_bytes: int = 64 * 1024 * 1024,
        clock: Callable[[], float] = time.monotonic,
        generation_now: Callable[[], int | None] | None = None,
        wrap: Callable[[ASGIApp], ASGIApp] = lambda app: app,
        inline_below: float = 0.0,
    ) -> None:
        self.app = app
        self.generation = generation
        self.generation_now = generation_now
        self.authenticate = authenticate
        self.max_age = max_age
        self._cookie_prefix = session_cookie.encode() + b"="
        self.max_bytes = max_bytes
        self.clock = clock
        self._entries: dict[tuple[Hashable, ...], CachedResponse] = {}
        self._bytes = 0
        self.wrap = wrap
        self.inline_below = inline_below
        self.lean_builds = 0  # for tests: rebuilds the lean path answered
        # paths whose route opted in once, with their lean build (or True: none)
        self._listing_paths: dict[str, LeanBuild | bool] = {}

    def clear(self) -> None:
        self._entries.clear()
        self._bytes = 0

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if (
            self.max_age <= 0
            or scope["type"] != "http"
            or scope["method"] != "GET"
            or scope["path"] not in self._listing_paths
        ):
            return await self._forward_and_learn(scope, receive, send)
        keyed = await self._key(scope)
        if keyed is None:
            return await self.app(scope, receive, send)
        key, principal = keyed
        lean = self._listing_paths.get(scope["path"])
        lean = lean if callable(lean) else None
        now = self.generation_now() if self.generation_now is not None else None
        built: tuple[Any, float] | None = None
        if now is None:  # one hop: the counter, and on a miss the lean build too
            generation, built = await anyio.to_thread.run_sync(
                self._read_then_build, key, lean, principal, scope
            )
        else:
            generation = now
        hit = self._fresh(key, generation)
        if hit is not None:
            await send(
                {"type": "http.response.start", "status": hit.status, "headers": hit.headers}
            )
            await send({"type": "http.response.body", "body": hit.body})
            return None
        if built is None and lean is not None:
            if self._cheap(key):
                built = _timed(lean, principal, scope)
            else:
                built = await anyio.to_thread.run_sync(_timed, lean, principal, scope)
        if built is not None and built[0] is not None:
            self.lean_builds += 1
            scope.setdefault("state", {})[_STATE_FLAG] = lean
            return await self._build(scope, receive, send, key, generation, *built)
        await self._build(scope, receive, send, key, generation)
        return None

    def _fresh(self, key: tuple[Hashable, ...], generation: int) -> CachedResponse | None:
        hit = self._entries.get(key)
        if (
            hit is not None
            and hit.generation == generation
            and self.clock() - hit.built_at < self.max_age
        ):
            return hit
        return None

    def _read_then_build(
        self, key: tuple[Hashable, ...], lean: LeanBuild | None, principal: Principal, scope: Scope
    ) -> tuple[int, tuple[Any, float] | None]:
        """In a worker thread: the generation, and the lean build where it is a miss."""
        generation = self.generation()
        if lean is None or self._fresh(key, generation) is not None:
            return generation, None
        return generation, _timed(lean, principal, scope)

    def _cheap(self, key: tuple[Hashable, ...]) -> bool:
        """Rebuild on the event loop: its last lean build took under ``inline_below``
        seconds (a thread hop then costs about as much as the build)."""
        old = self._entries.get(key)
        return old is not None and old.build_seconds < self.inline_below

    async def _key(self, scope: Scope) -> tuple[tuple[Hashable, ...], Principal] | None:
        """The cache key of this request and its principal, or None when it must not be
        cached. The key holds all a listing's answer depends on besides the database: the
        path and query, the public URL's parts (scheme, Host, root path) and the rights."""
        authorization = host = None
        for name, value in scope["headers"]:
            if name == b"authorization":
                authorization = value.decode("latin-1")
            elif name == b"host":
                host = value
            elif name == b"cookie" and self._cookie_prefix in value:
                return None
        if authorization is None:
            principal = Principal()
            rights: tuple[Hashable, ...] = ("anonymous",)
        else:
            try:
                principal = await anyio.to_thread.run_sync(
                    self.authenticate, token_from_header(authorization)
                )
            except HubError:
                return None
            rights = listing_rights(principal)
        where = (scope.get("scheme"), host, scope.get("root_path", ""))
        return (scope["path"], scope.get("query_string", b""), where, rights), principal

    async def _forward_and_learn(self, scope: Scope, receive: Any, send: Any) -> None:
        """Pass the request on; remember the path if its route marks itself a listing."""
        state = scope.setdefault("state", {})
        await self.app(scope, receive, send)
        if state.get(_STATE_FLAG) and scope["type"] == "http":
            if len(self._listing_paths) >= 10_000:  # /<owner> for every owner: bounded
                self._listing_paths.clear()
            self._listing_paths[scope["path"]] = state[_STATE_FLAG]

    async def _build(
        self,
        scope: Scope,
        receive: Any,
        send: Any,
        key: tuple[Hashable, ...],
        generation: int,
        response: ASGIApp | None = None,
        build_seconds: float = float("inf"),
    ) -> None:
        """Run the route, or send a lean build's ``response`` through the framework's outer
        middleware (either goes out as it is produced), and keep a copy. The generation was
        read before the listing's queries, so the copy is at least that new."""
        state = scope.setdefault("state", {})
        start: Message | None = None
        chunks: list[bytes] = []
        complete = False

        async def recording_send(message: Message) -> None:
            nonlocal start, complete
            if message["type"] == "http.response.start":
                start = message
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                complete = not message.get("more_body", False)
            await send(message)

        app = self.app if response is None else self.wrap(response)
        await app(scope, receive, recording_send)
        if not (state.get(_STATE_FLAG) and complete and start is not None):
            return
        headers = [(bytes(k), bytes(v)) for k, v in start.get("headers", [])]
        if start["status"] != 200 or any(k.lower() == b"set-cookie" for k, _ in headers):
            return
        body = b"".join(chunks)
        entry = CachedResponse(generation, self.clock(), 200, headers, body, build_seconds)
        self._store(key, entry)

    def _store(self, key: tuple[Hashable, ...], entry: CachedResponse) -> None:
        if len(entry.body) > self.max_bytes:
            return
        old = self._entries.pop(key, None)
        if old is not None:
            self._bytes -= len(old.body)
        if self._bytes + len(entry.body) > self.max_bytes:
            self.clear()  # simple and bounded; listings rebuild in milliseconds
        self._entries[key] = entry
        self._bytes += len(entry.body)
