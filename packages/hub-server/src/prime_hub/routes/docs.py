"""/docs (Swagger UI) and /redoc with every asset served by the hub itself.

FastAPI's defaults load their JavaScript, CSS, fonts and favicon from CDNs, so on an offline
hub the pages stay blank. The assets come from the ``fastapi-offline`` package instead.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from importlib.resources import files

from fastapi import FastAPI, Request
from fastapi.openapi.docs import (
    get_redoc_html,
    get_swagger_ui_html,
    get_swagger_ui_oauth2_redirect_html,
)
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

# The pages may load nothing from elsewhere: ReDoc, for one, shows a logo from its vendor's
# CDN. The browser enforces this (inline code and data:/blob: URLs are the bundles' own).
CSP = "default-src 'self' 'unsafe-inline' data: blob:"
ASSETS = "/static/docs"  # "static" is a reserved owner name: no environment page lives here
OAUTH2_REDIRECT = "/docs/oauth2-redirect"


def _local_only(page: HTMLResponse) -> HTMLResponse:
    page.headers["Content-Security-Policy"] = CSP
    return page


def install(app: FastAPI) -> None:
    """Add the two documentation pages and their assets (the app has docs_url=None)."""
    app.mount(ASSETS, StaticFiles(directory=str(files("fastapi_offline") / "static")), "docs")

    def page(
        request: Request, render: Callable[..., HTMLResponse], title: str, **urls: str
    ) -> HTMLResponse:
        """A docs page on this app's spec, with ``urls`` (paths here) under its root path."""
        root = str(request.scope.get("root_path") or "").rstrip("/")
        return _local_only(
            render(
                openapi_url=f"{root}{app.openapi_url}",
                title=f"{app.title} - {title}",
                **{key: f"{root}{path}" for key, path in urls.items()},
            )
        )

    @app.get("/docs", include_in_schema=False)
    def swagger_ui(request: Request) -> HTMLResponse:
        return page(
            request,
            get_swagger_ui_html,
            "API",
            oauth2_redirect_url=OAUTH2_REDIRECT,
            swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS}/favicon.png",
        )

    @app.get(OAUTH2_REDIRECT, include_in_schema=False)
    def swagger_ui_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get("/redoc", include_in_schema=False)
    def redoc(request: Request) -> HTMLResponse:
        return page(
            request,
            # fonts.googleapis.com is off limits offline too
            partial(get_redoc_html, with_google_fonts=False),
            "API reference",
            redoc_js_url=f"{ASSETS}/redoc.standalone.js",
            redoc_favicon_url=f"{ASSETS}/favicon.png",
        )
