"""Web pages over HTTP (no browser): sanitising, reserved names, CSRF, redirects, errors."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from prime_hub.errors import BadRequest
from prime_hub.names import validate_slug
from prime_hub.web.evals_view import reward_chart
from prime_hub.web.markdown import render_readme


@pytest.mark.parametrize(
    "hostile",
    [
        "<script>alert(1)</script>",
        '<img src="x" onerror="alert(1)">',
        "[click](javascript:alert(1))",
        '<a href="javascript:alert(1)">x</a>',
        "<iframe src='https://example.com'></iframe>",
        '<div style="background:url(javascript:alert(1))">x</div>',
    ],
)
def test_readme_markup_cannot_carry_script(hostile):
    html = render_readme(f"# Title\n\n{hostile}\n")
    assert "<h1>Title</h1>" in html
    elements = _elements(html)
    assert not {tag for tag, _ in elements} & {"script", "img", "iframe", "style"}, html
    for _, attrs in elements:
        for key, value in attrs:
            assert not key.startswith("on") and key != "style", html
            assert not (value or "").strip().lower().startswith("javascript:"), html


def _elements(html: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    """Every element the browser would build from ``html``, with its attributes."""
    found: list[tuple[str, list[tuple[str, str | None]]]] = []

    class Collect(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.append((tag, attrs))

    Collect().feed(html)
    return found


def test_readme_markdown_features_survive():
    html = render_readme("## Reward\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```py\nx = 1\n```\n")
    assert "<h2>Reward</h2>" in html and "<table>" in html and "<code" in html
    assert render_readme("a <b> c", "text/plain") == "<pre>a &lt;b&gt; c</pre>"


def test_reward_chart_plots_each_model_per_version():
    evals = [
        {"model": "a", "version": "1.1.0", "reward_mean": 0.8},
        {"model": "a", "version": "1.0.0", "reward_mean": 0.5},
        {"model": "a", "version": "1.0.0", "reward_mean": 0.1},  # older run: ignored
        {"model": "b<x>", "version": "1.0.0", "reward_mean": 0.3},
    ]
    svg = reward_chart(evals)
    assert svg.count("<circle") == 3 and svg.count("<polyline") == 1
    assert "a @ 1.0.0: 0.500" in svg and "b&lt;x&gt;" in svg
    assert reward_chart([]) == ""


@pytest.mark.parametrize("slug", ["simple", "api", "login", "settings", "files"])
def test_owner_names_that_shadow_pages_are_reserved(slug):
    with pytest.raises(BadRequest, match="reserved"):
        validate_slug(slug)


def test_pages_render_and_errors_are_pages(server, env):
    owner, _, name = env
    with server.client() as c:
        assert name in c.get("/", params={"q": name}).text
        assert f"/{owner}/{name}" in c.get(f"/{owner}").text
        page = c.get(f"/{owner}/{name}")
        assert page.status_code == 200 and "1.0.0" in page.text
        src = c.get(f"/{owner}/{name}/source/1.0.0/")
        assert src.status_code == 200 and "__init__.py" in src.text
        missing = c.get(f"/{owner}/nope-{name}")
        assert missing.status_code == 404 and missing.headers["content-type"].startswith(
            "text/html"
        )
        assert c.get(f"/{owner}/{name}/source/1.0.0/../../etc/passwd").status_code == 404
        # the JSON API keeps JSON errors
        assert c.get(f"/api/v1/environments/{owner}/nope").json()["detail"]


def test_login_sets_cookie_and_forms_need_csrf(server, env):
    owner, token, _ = env
    with server.client() as c:
        bad = c.post("/login", data={"token": "phub_wrong", "next": "/"})
        assert bad.status_code == 401 and "not valid" in bad.text
        ok = c.post("/login", data={"token": token, "next": "//evil.example/x"})
        assert ok.status_code == 303 and ok.headers["location"] == "/"  # no open redirect
        assert "httponly" in ok.headers["set-cookie"].lower()
        assert f'Signed in as <a href="/{owner}">' in c.get("/").text
        forged = c.post("/settings/tokens", data={"name": "x", "scope": "read"})
        assert forged.status_code == 403
        # the cookie does not authenticate the JSON API
        assert c.get("/api/v1/whoami").status_code == 401


def test_every_first_path_segment_the_hub_routes_is_a_reserved_owner_name(tmp_path):
    """An owner named like one of the hub's own URLs would be unreachable (or shadow them):
    the class, read from the app's routes, not a list kept by hand."""
    from prime_hub.app import create_app
    from prime_hub.settings import Settings

    def paths(routes):  # type: ignore[no-untyped-def]
        for route in routes:
            if hasattr(route, "original_router"):  # an included router (no extra prefix here)
                yield from paths(route.original_router.routes)
            elif getattr(route, "path", None):
                yield route.path

    app = create_app(Settings(data_dir=tmp_path))
    segments = {path.strip("/").split("/")[0] for path in paths(app.routes)}
    fixed = {s for s in segments if s and not s.startswith("{")}
    assert {"api", "dashboard", "simple"} <= fixed
    for segment in fixed:  # reserved, or not a valid owner name at all ("openapi.json")
        with pytest.raises(BadRequest):
            validate_slug(segment)


def test_every_html_page_carries_the_script_free_policy(server, env):
    """A hostile README or rollout is inert twice: escaped, and refused by the browser's
    Content-Security-Policy (no script source at all, nothing from another origin). Pages,
    HTML error pages and the login form carry it; JSON does not need it; the API docs page and
    the rollout viewer keep their own policies."""
    from prime_hub.web.headers import CSP

    owner, _, name = env
    with server.client() as c:
        for path in ["/", f"/{owner}", f"/{owner}/{name}", f"/{owner}/nope-{name}", "/login"]:
            page = c.get(path)
            assert page.headers["content-type"].startswith("text/html"), path
            assert page.headers["content-security-policy"] == CSP, path
            assert "script-src" not in CSP and "default-src 'none'" in CSP
            assert page.headers["x-content-type-options"] == "nosniff"
        assert "content-security-policy" not in c.get("/health").headers
        docs_page = c.get("/docs")
        assert docs_page.headers["content-security-policy"] != CSP  # its own, one header
        assert len(docs_page.headers.get_list("content-security-policy")) == 1
