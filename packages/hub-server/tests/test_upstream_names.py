"""The hub and its upstream index (issue 26): the pass-through never leaks the upstream's
credentials nor breaks on odd names, and a name the upstream serves is not registered here
without an admin's say.

Reproduced before the fix, through the HTTP API:
* an upstream URL with ``user:password@`` put the password into every anonymous redirect's
  ``Location``;
* non-ASCII look-alikes of names (long s ``ſ``, dotless ``ı``, the Kelvin sign) passed the
  name check and ended in a 500 (a ``Location`` that is not latin-1), as did a trailing
  newline;
* any publisher could register ``requests``, replacing PyPI's for every install through the
  hub.

The upstream is a real PEP 503 index on loopback (``conftest.upstream_index``, the
repository's logging stand-in for PyPI), so what reached it, with which credentials, is read
from its request log. The settings a test changes are the hub's own (``monkeypatch`` on the
running hub), as an admin would set them.
"""

from __future__ import annotations

import base64
from urllib.parse import quote

import pytest
from prime_hub_testkit import NOTHING_STORED, legacy_upload, make_wheel, publish, row_counts

from verifiers.testing import free_port

JSON = "application/vnd.pypi.simple.v1+json"
API = "/api/v1/environmentshub"


# ------------------------------------------------------------------ the pass-through
def test_upstream_credentials_never_appear_in_a_location(server, upstream_index, uid, monkeypatch):
    host = upstream_index.url.removeprefix("http://")
    monkeypatch.setattr(
        server.hub.settings, "upstream_index_url", f"http://mirror-user:s3cr%40t@{host}"
    )
    owner, token = server.new_user("cred")
    name = f"{uid}-elsewhere"
    for tok in (None, token):
        with server.client(tok) as c:
            for path in (f"/simple/{name}/", f"/{owner}/simple/{name}/"):
                for accept in (JSON, "text/html"):
                    r = c.get(path, headers={"Accept": accept})
                    assert r.status_code == 302, r.text
                    assert r.headers["location"] == f"{upstream_index.url}{name}/"
                    assert "s3cr" not in r.text and "mirror-user" not in r.text
    # the hub itself still uses them, for its own name checks (and only there)
    published = f"{uid}-mine"
    assert (
        publish(server, token, owner, published, [make_wheel(published, "1.0")]).status_code == 201
    )
    basic = "Basic " + base64.b64encode(b"mirror-user:s3cr@t").decode()
    assert upstream_index.asked_for(published) == [basic]


LOOK_ALIKES = ["reque\u017fts", "p\u0131p", "\u212aeras", "caf\u00e9", "name\n"]


def test_non_ascii_names_are_refused_with_a_4xx(server, user):
    owner, token = user
    for name in LOOK_ALIKES:
        quoted = quote(name)  # as a client sends it; the hub reads the name back decoded
        for tok in (None, token):
            with server.client(tok) as c:
                for path in (f"/simple/{quoted}/", f"/{owner}/simple/{quoted}/"):
                    for accept in (JSON, "text/html"):
                        r = c.get(path, headers={"Accept": accept}, follow_redirects=True)
                        assert r.status_code == 404, (name, path, r.status_code, r.text)
                        assert "location" not in r.headers
        # nor can such a name be published, on any route
        r = publish(server, token, owner, quoted, [make_wheel("x", "1.0")])
        assert r.status_code == 400, (name, r.text)
        with server.client(token) as c:
            assert c.post(f"{API}/resolve", json={"name": name}).status_code == 400, name
        assert row_counts(server.hub, name)["environments"] == 0


# ------------------------------------------------------------------ the publish-time name policy
def _via_api(server, token, owner, name) -> int:
    return publish(server, token, owner, name, [make_wheel(name, "1.0")]).status_code


def _via_legacy(server, token, owner, name) -> int:  # twine, uv publish
    with server.client() as c:
        return legacy_upload(c, token, name, "1.0", make_wheel(name, "1.0")).status_code


def _via_prime_cli(server, token, owner, name) -> int:  # `prime env push` creates it first
    with server.client(token) as c:
        return c.post(f"{API}/resolve", json={"name": name}).status_code


ROUTES = {"json-api": _via_api, "legacy": _via_legacy, "prime-cli": _via_prime_cli}
CREATED = {"json-api": 201, "legacy": 201, "prime-cli": 200}


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_a_name_the_upstream_serves_is_not_registered_without_an_admin(
    server, upstream_index, uid, route, monkeypatch
):
    owner, token = server.new_user("sq")
    served = f"{uid}-Pkg"
    upstream_index.serve(served)
    for spelling in (served, served.lower(), served.replace("-", "_"), served.upper()):
        assert ROUTES[route](server, token, owner, spelling) == 409, spelling
    with server.client(token) as c:  # the reason, and the way out, are in the answer
        r = c.post(f"{API}/resolve", json={"name": served})
        assert "ALLOWED_UPSTREAM_NAMES" in r.json()["detail"] and upstream_index.url in r.text
    assert row_counts(server.hub, served) == NOTHING_STORED
    # the admin allows it (a pattern): now it publishes like any name
    monkeypatch.setattr(server.hub.settings, "allowed_upstream_names", [f"{uid}-*"])
    assert ROUTES[route](server, token, owner, served) == CREATED[route]
    # the publisher's token never went upstream; the hub asked once (answers are cached)
    assert upstream_index.asked_for(served) == ["-"]


def test_names_the_upstream_does_not_serve_are_asked_once(server, upstream_index, uid):
    a, ta = server.new_user("fresh")
    b, tb = server.new_user("fresh")
    name = f"{uid}-new"
    assert _via_api(server, ta, a, name) == 201
    assert _via_api(server, tb, b, name) == 201  # another owner, same name: cached answer
    assert upstream_index.asked_for(name) == ["-"]


def test_an_environment_keeps_publishing_when_the_upstream_later_serves_its_name(
    server, upstream_index, user, uid, monkeypatch
):
    owner, token = user
    assert publish(server, token, owner, uid, [make_wheel(uid, "1.0")]).status_code == 201
    upstream_index.serve(uid)
    monkeypatch.setattr(server.hub.settings, "upstream_name_cache_seconds", 0)  # no cache
    assert publish(server, token, owner, uid, [make_wheel(uid, "1.1")]).status_code == 201
    assert len(upstream_index.asked_for(uid)) == 1  # only the first publish asked


def test_local_only_names_are_always_allowed(server, upstream_index, uid, monkeypatch):
    """The SDK's name, `verifiers`, is PyPI's too: the hub serves it by design."""
    upstream_index.serve(uid)
    monkeypatch.setattr(server.hub.settings, "local_only_names", [uid])
    owner, token = server.new_user("sdk")
    assert _via_api(server, token, owner, uid) == 201
    assert upstream_index.asked_for(uid) == []


def test_an_unreachable_upstream_refuses_new_names_unless_allowed(server, user, uid, monkeypatch):
    owner, token = user
    closed = free_port()  # nothing listens there
    monkeypatch.setattr(
        server.hub.settings, "upstream_index_url", f"http://user:pw@127.0.0.1:{closed}/simple/"
    )
    for route in ROUTES:
        name = f"{uid}-{route}"
        assert ROUTES[route](server, token, owner, name) == 503, route
        assert row_counts(server.hub, name)["environments"] == 0
    with server.client(token) as c:
        detail = c.post(f"{API}/resolve", json={"name": f"{uid}-x"}).json()["detail"]
    assert "could not ask" in detail and ":pw@" not in detail and "user:" not in detail
    monkeypatch.setattr(server.hub.settings, "allowed_upstream_names", [f"{uid}-json-api"])
    assert _via_api(server, token, owner, f"{uid}-json-api") == 201


def test_an_air_gapped_hub_registers_only_allowed_names(server, user, uid, monkeypatch):
    owner, token = user
    monkeypatch.setattr(server.hub.settings, "upstream_index_url", "")
    monkeypatch.setattr(server.hub.settings, "allowed_upstream_names", [f"{uid}-team-*"])
    for route in ROUTES:
        assert ROUTES[route](server, token, owner, f"{uid}-{route}") == 403, route
        assert ROUTES[route](server, token, owner, f"{uid}-team-{route}") == CREATED[route]
    monkeypatch.setattr(server.hub.settings, "allowed_upstream_names", ["*"])  # policy off
    assert _via_api(server, token, owner, f"{uid}-anything") == 201


def test_nobody_without_publish_rights_makes_the_hub_ask_upstream(server, upstream_index, uid):
    owner, _ = server.new_user("ro")
    _, read_only = server.hub.accounts.create_token(owner, "read")
    for route in ROUTES:
        name = f"{uid}-{route}"
        assert ROUTES[route](server, read_only, owner, name) in (401, 403), route
        assert upstream_index.asked_for(name) == []


def test_a_private_name_never_goes_upstream_and_is_checked_when_made_public(
    server, upstream_index, user, uid, monkeypatch
):
    """A private environment is answered only to its readers and its name must not reach
    the upstream (install safety): it is not checked at publish, but going public is
    registering the name for everyone, so the policy applies then."""
    owner, token = user
    name = f"{uid}-internal"
    upstream_index.serve(name)
    r = publish(server, token, owner, name, [make_wheel(name, "1.0")], visibility="private")
    assert r.status_code == 201, r.text
    assert upstream_index.asked_for(name) == []
    base = f"/api/v1/environments/{owner}/{name}"
    with server.client(token) as c:
        r = c.patch(base, json={"visibility": "public"})
        assert r.status_code == 409 and "ALLOWED_UPSTREAM_NAMES" in r.json()["detail"]
        assert c.get(base).json()["visibility"] == "private"
        monkeypatch.setattr(server.hub.settings, "allowed_upstream_names", [name])
        assert c.patch(base, json={"visibility": "public"}).status_code == 200
        assert c.get(base).json()["visibility"] == "public"
