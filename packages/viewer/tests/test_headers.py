"""`verifiers_viewer.headers.SecurityHeaders`, the one middleware behind the viewer's headers
and the hub's HTML pages' (issue 29 item 5), over real HTTP: which responses get the headers,
and that a response naming its own policy keeps it."""

from __future__ import annotations

import httpx
import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route
from verifiers_viewer.headers import SecurityHeaders, security_headers
from verifiers_viewer.server import LoopbackServer

POLICY = security_headers("default-src 'none'", "no-referrer")
OWN_CSP = "default-src 'self'"


def _page(request: Request) -> Response:
    return HTMLResponse("<p>page</p>")


def _own_policy(request: Request) -> Response:
    return HTMLResponse("<p>docs</p>", headers={"Content-Security-Policy": OWN_CSP})


def _data(request: Request) -> Response:
    return JSONResponse({"a": 1})


@pytest.fixture(scope="module")
def urls():
    """One server a mode: every response, and text/html responses only."""
    routes = [Route("/page", _page), Route("/own", _own_policy), Route("/data", _data)]
    servers = {
        html_only: LoopbackServer(
            Starlette(
                routes=routes,
                middleware=[Middleware(SecurityHeaders, headers=POLICY, html_only=html_only)],
            ),
            port=0,
        ).start()
        for html_only in (False, True)
    }
    yield {mode: server.base_url for mode, server in servers.items()}
    for server in servers.values():
        server.stop()


@pytest.mark.parametrize(
    ("html_only", "path", "status"),
    [(False, "/page", 200), (True, "/page", 200), (False, "/missing", 404)],
)
def test_pages_and_errors_get_every_header(urls, html_only, path, status) -> None:
    r = httpx.get(urls[html_only] + path, timeout=10)
    assert r.status_code == status
    assert r.headers["content-security-policy"] == "default-src 'none'"
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["referrer-policy"] == "no-referrer"


@pytest.mark.parametrize("html_only", [False, True])
def test_a_response_with_its_own_policy_keeps_it_alone(urls, html_only) -> None:
    r = httpx.get(urls[html_only] + "/own", timeout=10)
    assert r.headers.get_list("content-security-policy") == [OWN_CSP]
    assert r.headers["x-content-type-options"] == "nosniff"  # the headers it lacked are added


@pytest.mark.parametrize(("html_only", "added"), [(False, True), (True, False)])
def test_html_only_leaves_other_responses_alone(urls, html_only, added) -> None:
    data = httpx.get(urls[html_only] + "/data", timeout=10)
    missing = httpx.get(urls[html_only] + "/missing", timeout=10)  # Starlette's plain-text 404
    assert data.json() == {"a": 1} and missing.status_code == 404
    for r in (data, missing):
        assert ("content-security-policy" in r.headers) is added
        assert ("referrer-policy" in r.headers) is added
