"""/docs (Swagger UI) and /redoc with every asset served by the hub itself.

FastAPI's defaults load their JavaScript, CSS, fonts and favicon from CDNs, so on an offline
hub the pages stay blank. The assets come from the ``fastapi-offline`` package instead.
"""

from __future__ import annotations

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

    def _root(request: Request) -> str:
        return str(request.scope.get("root_path") or "").rstrip("/")

    @app.get("/docs", include_in_schema=False)
    def swagger_ui(request: Request) -> HTMLResponse:
        root = _root(request)
        return _local_only(
            get_swagger_ui_html(
                openapi_url=f"{root}{app.openapi_url}",
                title=f"{app.title} - API",
                oauth2_redirect_url=f"{root}{OAUTH2_REDIRECT}",
                swagger_js_url=f"{root}{ASSETS}/swagger-ui-bundle.js",
                swagger_css_url=f"{root}{ASSETS}/swagger-ui.css",
                swagger_favicon_url=f"{root}{ASSETS}/favicon.png",
            )
        )

    @app.get(OAUTH2_REDIRECT, include_in_schema=False)
    def swagger_ui_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get("/redoc", include_in_schema=False)
    def redoc(request: Request) -> HTMLResponse:
        root = _root(request)
        return _local_only(
            get_redoc_html(
                openapi_url=f"{root}{app.openapi_url}",
                title=f"{app.title} - API reference",
                redoc_js_url=f"{root}{ASSETS}/redoc.standalone.js",
                redoc_favicon_url=f"{root}{ASSETS}/favicon.png",
                with_google_fonts=False,  # fonts.googleapis.com is off limits offline too
            )
        )
