"""Security headers of every HTML page the hub serves.

A README, an evaluation's metadata and a pushed rollout are hostile input rendered into pages;
escaping and the sanitiser keep them inert, and this policy is the second wall: no script at
all, nothing loaded from another origin, forms posting only back to the hub. The pages' one
inline ``<style>`` needs ``'unsafe-inline'`` for styles; with ``img-src``/``default-src``
closed to other origins a style cannot send anything anywhere.

A response that already names its own policy keeps it (the API docs' page; the rollout
viewer's stricter one)."""

from __future__ import annotations

from starlette.types import ASGIApp
from verifiers_viewer.headers import SecurityHeaders, security_headers

CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)


class HtmlSecurityHeaders(SecurityHeaders):
    """ASGI middleware: the headers above on each ``text/html`` response lacking them."""

    def __init__(self, app: ASGIApp) -> None:
        super().__init__(app, security_headers(CSP, "same-origin"), html_only=True)
