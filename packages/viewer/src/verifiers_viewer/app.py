"""The viewer as a Starlette app over a `RunSource`: mountable under any prefix (every link
is built with ``url_for``, so it carries the mount's ``root_path``)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from .headers import SecurityHeaders, security_headers
from .index import RolloutIndex
from .pages import Links, PageError, Renderer
from .source import NotFound, Run, RunSource

HERE = Path(__file__).parent

# The local app's policy: no script at all, styles and images only from the viewer itself.
CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)


class IndexCache:
    """One `RolloutIndex` per run (by its records and index folder), refreshed on use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._indexes: dict[tuple[Path, Path], RolloutIndex] = {}

    def get(self, run: Run) -> RolloutIndex:
        key = (run.records.resolve(), run.index_dir.resolve())
        with self._lock:
            index = self._indexes.get(key)
            if index is None:
                index = self._indexes[key] = RolloutIndex(run.records, run.index_dir)
        index.refresh()
        return index

    def close(self) -> None:
        with self._lock:
            for index in self._indexes.values():
                index.close()
            self._indexes.clear()


class ServerLinks(Links):
    """Links for pages served by the app (``url_for``, so a mount prefix is kept)."""

    def __init__(self, request: Request) -> None:
        self.request = request

    def __call__(self, name: str, query: dict[str, Any] | None = None, **params: Any) -> str:
        path = self.request.url_for(name, **{k: str(v) for k, v in params.items()}).path
        pairs = {k: v for k, v in (query or {}).items() if v not in (None, "")}
        return f"{path}?{urlencode(pairs)}" if pairs else path

    def static(self, path: str) -> str:
        return self.request.url_for("static", path=path).path


def create_app(source: RunSource, csp: str | None = CSP) -> Starlette:
    """The viewer over `source`. ``csp=None`` leaves the Content-Security-Policy header to
    whoever mounts the app (the hub sets its own)."""
    renderer = Renderer()
    indexes = IndexCache()

    def page(request: Request, render: Any) -> Response:
        links = ServerLinks(request)
        try:
            html = render(links)
        except NotFound as e:
            raise HTTPException(404, str(e) or "not found") from e
        except PageError as e:
            raise HTTPException(400, str(e)) from e
        return HTMLResponse(html)

    def run_of(request: Request, key: str) -> tuple[Run, RolloutIndex]:
        run = source.get(request, key)
        return run, indexes.get(run)

    def runs_page(request: Request) -> Response:
        return page(request, lambda links: renderer.runs(links, source.list(request)))

    def run_page(request: Request) -> Response:
        def render(links: Links) -> str:
            run, index = run_of(request, request.path_params["key"])
            return renderer.run(links, run, index, dict(request.query_params))

        return page(request, render)

    def rollout_page(request: Request) -> Response:
        def render(links: Links) -> str:
            run, index = run_of(request, request.path_params["key"])
            return renderer.rollout(links, run, index, request.path_params["line"])

        return page(request, render)

    def example_page(request: Request) -> Response:
        def render(links: Links) -> str:
            run, index = run_of(request, request.path_params["key"])
            return renderer.example(links, run, index, request.path_params["example"])

        return page(request, render)

    def compare_page(request: Request) -> Response:
        def render(links: Links) -> str:
            q = request.query_params
            runs = source.list(request)
            a = b = None
            if q.get("a") and q.get("b"):
                a, b = run_of(request, q["a"]), run_of(request, q["b"])
            return renderer.compare(links, runs, a, b, dict(q))

        return page(request, render)

    def compare_example_page(request: Request) -> Response:
        def render(links: Links) -> str:
            q = request.query_params
            if not (q.get("a") and q.get("b")):
                raise PageError("choose two runs: ?a=KEY&b=KEY")
            a, b = run_of(request, q["a"]), run_of(request, q["b"])
            return renderer.compare_example(links, a, b, request.path_params["example"])

        return page(request, render)

    async def not_found(request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 500)
        detail = getattr(exc, "detail", "error")
        return HTMLResponse(renderer.error(status, str(detail)), status_code=status)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        indexes.close()

    app = Starlette(
        routes=[
            Route("/", runs_page, name="runs"),
            Route("/compare", compare_page, name="compare"),
            Route("/compare/examples/{example}", compare_example_page, name="compare_example"),
            Route("/runs/{key}", run_page, name="run"),
            Route("/runs/{key}/rollouts/{line:int}", rollout_page, name="rollout"),
            Route("/runs/{key}/examples/{example}", example_page, name="example"),
            Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
        ],
        exception_handlers={HTTPException: not_found},
        middleware=[Middleware(SecurityHeaders, headers=security_headers(csp, "no-referrer"))]
        if csp
        else [],
        lifespan=lifespan,
    )
    app.state.indexes = indexes
    return app
