"""The application factory: no global state, everything hangs off ``app.state``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio.to_thread
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from . import __version__
from .db.engine import open_database
from .db.migrate import upgrade
from .errors import HubError
from .fastpath import IndexFastPath
from .index_cache import IndexCache, Page
from .listing_cache import ListingCache
from .rollouts import RolloutStore
from .rollouts_viewer import MOUNT, mount_viewer
from .routes import (
    api,
    compat,
    compat_extras,
    compat_inspect,
    docs,
    evals,
    legacy,
    simple,
    staged,
    web,
)
from .service import DownloadInfo, Hub
from .settings import Settings
from .storage import make_storage
from .web.headers import HtmlSecurityHeaders
from .web.session import COOKIE as SESSION_COOKIE


def build_hub(settings: Settings, migrate: bool | None = None) -> Hub:
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    db = open_database(settings.resolved_database_url)
    if settings.create_tables if migrate is None else migrate:
        upgrade(db.write_engine)
    return Hub(settings, db, make_storage(settings))


def create_app(settings: Settings | None = None, hub: Hub | None = None) -> FastAPI:
    """The FastAPI application (``app.state.hub`` holds the registry)."""
    settings = settings or (hub.settings if hub else Settings())
    hub = hub or build_hub(settings)
    cache = IndexCache[Page](settings.index_cache_seconds)
    file_cache = IndexCache[DownloadInfo | bytes](settings.index_cache_seconds)
    hub.on_change.append(cache.clear)
    hub.on_change.append(file_cache.clear)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        anyio.to_thread.current_default_thread_limiter().total_tokens = 64
        yield
        hub.downloads.close()

    app = FastAPI(
        title="prime-hub",
        version=__version__,
        description="A registry for environment packages: PEP 503/691 simple API, legacy "
        'upload, and a JSON API. Errors are JSON objects {"detail": ...}.',
        lifespan=lifespan,
        docs_url=None,  # served by routes.docs from local assets instead of a CDN
        redoc_url=None,
    )
    app.state.hub = hub
    app.state.index_cache = cache
    app.state.file_cache = file_cache

    @app.exception_handler(HubError)
    async def _hub_error(request: Request, exc: HubError) -> Response:
        if getattr(request.state, "html_errors", False):
            return await run_in_threadpool(web.error_page, request, exc)
        return JSONResponse({"detail": exc.detail}, status_code=exc.status_code)

    @app.exception_handler(RequestValidationError)
    async def _invalid_request(_request: Request, exc: RequestValidationError) -> JSONResponse:
        # One readable line (clients print it as is); never echo the input back, which may not
        # even be JSON-serialisable (NaN).
        return JSONResponse({"detail": validation_message(exc)}, status_code=422)

    @app.get("/health", tags=["ops"])
    def health() -> dict[str, str]:
        return {"status": "ok", "version": __version__}

    docs.install(app)
    app.include_router(web.first_router)  # "/" and owner pages: first, see web.first_router
    app.include_router(api.router)
    app.include_router(staged.router)
    app.include_router(evals.router)
    app.include_router(compat.router)
    app.include_router(compat_inspect.router)
    app.include_router(compat_extras.router)  # before web: /dashboard/... are CLI links
    app.include_router(legacy.router)
    app.include_router(simple.router)
    # the rollout viewer, before the web pages' /{owner}/{name} can take /evals/<page>
    app.state.rollouts = RolloutStore(hub)
    app.mount(MOUNT, mount_viewer(hub, app.state.rollouts))
    app.include_router(web.router)
    app.add_middleware(HtmlSecurityHeaders)
    return app


def validation_message(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(x) for x in err.get("loc", ()) if x != "body")
        parts.append(
            f"{where}: {err.get('msg', 'invalid')}" if where else err.get("msg", "invalid")
        )
    return "invalid request: " + "; ".join(parts)


def create_asgi(settings: Settings | None = None, hub: Hub | None = None) -> IndexFastPath:
    """What the server runs: the application behind the cached-index fast path."""
    app = create_app(settings, hub)
    hub = app.state.hub
    listings = ListingCache(
        app,
        hub.db.counter,
        hub.accounts.authenticate,
        max_age=hub.settings.listing_cache_seconds,
        session_cookie=SESSION_COOKIE,
        # On the loop only where the read is a local file's: a PostgreSQL read waits on the
        # network, and a database that stops answering (a failover) would freeze the loop,
        # health checks included, where a worker thread just waits.
        generation_now=hub.db.counter.now if hub.db.is_sqlite else None,
        wrap=HtmlSecurityHeaders,  # a lean listing's response gets the pages' headers too
        # rebuilds measured cheap run on the loop, on SQLite only: see ListingCache
        inline_below=hub.settings.listing_inline_ms / 1000 if hub.db.is_sqlite else 0.0,
    )
    hub.on_change.append(listings.clear)
    return IndexFastPath(listings, app.state.index_cache)
