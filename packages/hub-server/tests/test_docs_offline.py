"""/docs (Swagger UI) and /redoc work with no internet: every asset comes from the hub.

First over HTTP (every script, stylesheet and icon the pages reference is served here,
non-empty, and a Content-Security-Policy keeps the browser from loading anything else), then in a real headless chromium whose DNS resolves nothing but loopback, so any
request to a CDN fails: the pages must still render the API's operations.
"""

from __future__ import annotations

from collections.abc import Iterator
from html.parser import HTMLParser

import httpx
import pytest
from prime_hub_testkit import HubServer
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from verifiers.testing import chromium

PAGES = ("/docs", "/redoc")
pytestmark = pytest.mark.parametrize("server", ["sqlite"], indirect=True)


class _Refs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for key, value in attrs:
            if key in ("src", "href") and value:
                self.urls.append(value)


def _refs(html: str) -> list[str]:
    parser = _Refs()
    parser.feed(html)
    return parser.urls


@pytest.mark.parametrize("page", PAGES)
def test_docs_pages_reference_only_assets_the_hub_serves(server: HubServer, page: str) -> None:
    with httpx.Client(base_url=server.url) as c:
        r = c.get(page)
        assert r.status_code == 200 and "text/html" in r.headers["content-type"]
        urls = _refs(r.text)
        assert any(u.endswith(".js") for u in urls), urls  # the UI bundle itself
        for url in urls:
            assert url.startswith("/") and not url.startswith("//"), f"{page} loads {url}"
            asset = c.get(url)
            assert asset.status_code == 200 and len(asset.content) > 1000, url
        assert "googleapis" not in r.text and "jsdelivr" not in r.text
        # and the browser is told to load nothing from elsewhere (ReDoc would fetch a logo)
        assert r.headers["content-security-policy"].startswith("default-src 'self'")
        assert c.get("/openapi.json").json()["paths"]  # what both pages then fetch


@pytest.fixture(scope="module")
def offline_browser() -> Iterator[webdriver.Chrome]:
    # egress blocked: every host name fails to resolve except the loopback hub; the console
    # log kept, to see CSP refusals
    with chromium(
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
        capabilities={"goog:loggingPrefs": {"browser": "ALL"}},
    ) as drv:
        yield drv


def _escaped(drv: webdriver.Chrome, hub: str) -> list[str]:
    """The page's requests that left for another host: those the browser made that did not go
    to the hub, except the ones it refused under the page's Content-Security-Policy."""
    urls = drv.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name).concat([location.href])"
    )
    refused = [
        entry["message"]
        for entry in drv.get_log("browser")
        if "Content Security Policy" in entry["message"] and "has been blocked" in entry["message"]
    ]
    return [u for u in urls if not u.startswith(hub) and not any(f"'{u}'" in m for m in refused)]


def _cdn_reachable(drv: webdriver.Chrome) -> bool:
    """Whether the page could fetch from the CDN FastAPI uses by default (it must not)."""
    return drv.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch('https://cdn.jsdelivr.net/npm/swagger-ui-dist@5/swagger-ui.css', {mode: 'no-cors'})"
        ".then(() => done(true), () => done(false));"
    )


def test_swagger_ui_renders_offline(server: HubServer, offline_browser: webdriver.Chrome) -> None:
    drv = offline_browser
    drv.get(f"{server.url}/docs")
    WebDriverWait(drv, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".opblock"))
    paths = [e.text for e in drv.find_elements(By.CSS_SELECTOR, ".opblock-summary-path")]
    assert "/api/v1/environmentshub/{owner}/{name}/@{ref}/inspect" in paths
    assert "prime-hub" in drv.find_element(By.CSS_SELECTOR, ".info .title").text
    assert _escaped(drv, server.url) == []
    drv.get(f"{server.url}/health")  # a page without the docs' CSP: only the DNS block applies
    assert not _cdn_reachable(drv)  # the block is real: CDN-served docs would stay blank


def test_redoc_renders_offline(server: HubServer, offline_browser: webdriver.Chrome) -> None:
    drv = offline_browser
    drv.get(f"{server.url}/redoc")
    WebDriverWait(drv, 30).until(
        lambda d: "Inspect Source" in d.find_element(By.TAG_NAME, "body").text
    )
    assert drv.find_elements(By.CSS_SELECTOR, "[role=menuitem], li[data-item-id]")
    assert _escaped(drv, server.url) == []
