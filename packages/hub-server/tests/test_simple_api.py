"""The simple repository API: negotiation, PEP 658/691/700/592 fields, caching headers."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator

import pytest
from prime_hub_testkit import HubServer, make_sdist, make_wheel, publish, start_hub

from prime_hub.settings import Settings

JSON = "application/vnd.pypi.simple.v1+json"


def test_content_negotiation(server, user, uid):
    owner, token = user
    publish(server, token, owner, uid, [make_wheel(uid, "1.0")])
    path = f"/{owner}/simple/{uid}/"
    with server.client() as c:
        assert c.get(path).headers["content-type"].startswith("application/vnd.pypi.simple.v1+html")
        assert (
            c.get(path, headers={"Accept": "text/html"})
            .headers["content-type"]
            .startswith("text/html")
        )
        r = c.get(path, headers={"Accept": f"text/html;q=0.5, {JSON}"})
        assert r.headers["content-type"] == JSON and r.json()["meta"]["api-version"] == "1.1"
        r = c.get(path, headers={"Accept": f"{JSON};q=0.1, application/vnd.pypi.simple.v1+html"})
        assert r.headers["content-type"].startswith("application/vnd.pypi.simple.v1+html")
        assert c.get(path, headers={"Accept": "application/x-nothing"}).status_code == 406
        assert c.get(path, params={"format": JSON}).headers["content-type"] == JSON
        assert c.get(f"/{owner}/simple/", headers={"Accept": JSON}).json()["projects"] == [
            {"name": uid}
        ]
        assert {"name": uid} in c.get("/simple/", headers={"Accept": JSON}).json()["projects"]


def test_pep_658_700_fields_and_metadata_file(server, user, uid):
    owner, token = user
    wheel, sdist = make_wheel(uid, "1.0", requires_python=">=3.9"), make_sdist(uid, "1.0")
    publish(server, token, owner, uid, [wheel, sdist])
    with server.client() as c:
        doc = c.get(f"/{owner}/simple/{uid}/", headers={"Accept": JSON}).json()
        assert doc["name"] == uid and doc["versions"] == ["1.0"]
        files = {f["filename"]: f for f in doc["files"]}
        w = files[wheel[0]]
        assert w["hashes"] == {"sha256": hashlib.sha256(wheel[1]).hexdigest()}
        assert w["size"] == len(wheel[1])
        assert w["requires-python"] == ">=3.9"
        assert w["upload-time"].endswith("Z")
        assert w["yanked"] is False
        assert "core-metadata" not in files[sdist[0]]
        meta = c.get(w["url"] + ".metadata")
        assert meta.status_code == 200
        assert hashlib.sha256(meta.content).hexdigest() == w["core-metadata"]["sha256"]
        assert meta.content.startswith(b"Metadata-Version:")
        html = c.get(f"/{owner}/simple/{uid}/").text
        assert f"#sha256={w['hashes']['sha256']}" in html
        assert f'data-core-metadata="sha256={w["core-metadata"]["sha256"]}"' in html
        assert 'data-requires-python="&gt;=3.9"' in html


def test_etag_and_cache_headers(server, user, uid):
    owner, token = user
    publish(server, token, owner, uid, [make_wheel(uid, "1.0")])
    path = f"/{owner}/simple/{uid}/"
    with server.client() as c:
        first = c.get(path)
        etag = first.headers["etag"]
        assert "max-age" in first.headers["cache-control"]
        assert "Accept" in first.headers["vary"]
        assert c.get(path, headers={"If-None-Match": etag}).status_code == 304
    publish(server, token, owner, uid, [make_wheel(uid, "1.1")])
    with server.client() as c:
        changed = c.get(path, headers={"If-None-Match": etag})  # writes invalidate at once
        assert changed.status_code == 200 and changed.headers["etag"] != etag
    with server.client(token) as c:
        assert c.get(path).headers["cache-control"].startswith("private")


def test_global_index_and_ambiguous_names(server, uid):
    a, ta = server.new_user("ga")
    b, tb = server.new_user("gb")
    publish(server, ta, a, uid, [make_wheel(uid, "1.0")])
    with server.client() as c:
        r = c.get(f"/simple/{uid}/", headers={"Accept": JSON})
        assert r.status_code == 200 and r.json()["files"][0]["url"].startswith(f"/files/{a}/")
    publish(server, tb, b, uid, [make_wheel(uid, "2.0")])
    time.sleep(server.settings.index_cache_seconds)
    with server.client() as c:
        r = c.get(f"/simple/{uid}/")
        assert r.status_code == 409 and f"/{a}/simple/" in r.json()["detail"]
        # per-owner indexes are never ambiguous
        assert c.get(f"/{b}/simple/{uid}/", headers={"Accept": JSON}).json()["versions"] == ["2.0"]
        # a third owner's index does not pick one of them either, nor pass the name upstream
        third, _ = server.new_user("gc")
        r = c.get(f"/{third}/simple/{uid}/")
        assert r.status_code == 409 and "location" not in r.headers


def test_download_counts(server, user, uid):
    owner, token = user
    publish(server, token, owner, uid, [make_wheel(uid, "1.0")])
    with server.client() as c:
        url = c.get(f"/{owner}/simple/{uid}/", headers={"Accept": JSON}).json()["files"][0]["url"]
        for _ in range(3):
            assert c.get(url, follow_redirects=True).status_code == 200
        deadline = time.monotonic() + 5
        while c.get(f"/api/v1/environments/{owner}/{uid}").json()["downloads"] < 3:
            assert time.monotonic() < deadline, "download counts not recorded"
            time.sleep(0.05)
        files = c.get(f"/api/v1/environments/{owner}/{uid}/versions/1.0").json()["files"]
        assert files[0]["downloads"] == 3


# ------------------------------------------------------------------ upstream pass-through
def _index_paths(owner: str, name: str) -> list[str]:
    return [f"/simple/{name}/", f"/{owner}/simple/{name}/"]


def test_a_name_the_hub_does_not_host_redirects_to_the_upstream_index(server, user, uid):
    owner, token = user
    name = f"elsewhere-{uid}"
    upstream = server.settings.upstream
    assert upstream
    for tok in (None, token):
        with server.client(tok) as c:
            for path in _index_paths(owner, name):
                for accept in (JSON, "text/html"):
                    for _ in range(2):  # the second answer comes from the page cache
                        r = c.get(path, headers={"Accept": accept})
                        assert r.status_code == 302, (path, tok is None, r.text)
                        assert r.headers["location"] == f"{upstream}{name}/"
                        assert r.headers["cache-control"] == "no-cache"
            # only a valid project name is sent on: anything else is not found here
            for bad in ("-x-", "a@b", "x" * 101):
                r = c.get(f"/simple/{bad}/", follow_redirects=False)
                assert r.status_code == 404 and "location" not in r.headers, bad
            # the hub's own pages say so, for clients that pick their install strategy
            meta = c.get(f"/{owner}/simple/", headers={"Accept": JSON}).json()["meta"]
            assert meta["_upstream-pass-through"] is True


def test_a_name_the_hub_hosts_is_never_passed_upstream(server, uid):
    a, ta = server.new_user("pa")
    b, _ = server.new_user("pb")
    publish(server, ta, a, uid, [make_wheel(uid, "1.0")])
    with server.client() as c:
        for path in (*_index_paths(a, uid), f"/{b}/simple/{uid}/"):  # b's index: a's copy
            r = c.get(path, headers={"Accept": JSON})
            assert r.status_code == 200, path
            assert [f["url"].split("/")[2] for f in r.json()["files"]] == [a]
            assert r.json()["meta"]["_upstream-pass-through"] is True
        # names the hub reserves for itself are never passed upstream, hosted or not
        assert server.settings.local_only_names == ["verifiers", "prime"]
        for path in [*_index_paths(b, "verifiers"), *_index_paths(b, "prime")]:
            r = c.get(path, follow_redirects=False)
            assert r.status_code == 404 and "location" not in r.headers, path


@pytest.mark.parametrize("who", ["anonymous", "stranger", "reader-of-another-env"])
def test_private_names_stay_on_the_hub_for_callers_who_cannot_read_them(server, uid, who):
    owner, token = server.new_user("po")
    other, other_token = server.new_user("px")
    publish(server, token, owner, uid, [make_wheel(uid, "1.0")], visibility="private")
    publish(server, token, owner, f"{uid}-pub", [make_wheel(f"{uid}-pub", "1.0")])
    # another owner hosts the same name publicly: the private owner's index must not use it
    publish(server, other_token, other, uid, [make_wheel(uid, "9.0")])
    tok = {
        "anonymous": None,
        "stranger": server.new_user("ps")[1],
        "reader-of-another-env": server.hub.accounts.create_token(
            owner, "read", environment=f"{owner}/{uid}-pub"
        )[1],
    }[who]
    with server.client(tok) as c:
        r = c.get(f"/{owner}/simple/{uid}/", follow_redirects=False)
        assert r.status_code == 404 and "location" not in r.headers
        assert r.json() == {"detail": "not found"}
    with server.client(token) as c:  # the owner reads their own private copy
        r = c.get(f"/{owner}/simple/{uid}/", headers={"Accept": JSON})
        assert r.json()["versions"] == ["1.0"]


@pytest.fixture(scope="module")
def offline_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubServer]:
    """A hub with the pass-through disabled (air-gapped): with no upstream to ask, a new name
    needs the admin's allow-list (test_name_policy.py), here the one name the tests publish."""
    data = tmp_path_factory.mktemp("hub-offline")
    settings = Settings(data_dir=data, upstream_index_url="", allowed_upstream_names=["here"])
    hub = start_hub("sqlite", settings, {"PRIME_HUB_DATA_DIR": str(data)})
    yield hub
    hub.stop()


def test_without_a_pass_through_unknown_names_are_not_found(offline_hub):
    owner, token = offline_hub.new_user("off")
    publish(offline_hub, token, owner, "here", [make_wheel("here", "1.0")])
    with offline_hub.client() as c:
        for path in _index_paths(owner, "not-here"):
            r = c.get(path, follow_redirects=False)
            assert r.status_code == 404 and "location" not in r.headers
        doc = c.get(f"/{owner}/simple/here/", headers={"Accept": JSON}).json()
        assert doc["meta"]["_upstream-pass-through"] is False
        # the API's install command is the one that works here: uv with the hub first
        info = c.get(f"/api/v1/environments/{owner}/here").json()
        assert (
            info["install"].startswith("uv pip install --index ")
            and "first-index" in (info["install"])
        )


def test_upstream_setting_is_checked():
    assert Settings(upstream_index_url="http://mirror.local/simple").upstream == (
        "http://mirror.local/simple/"
    )
    assert Settings(upstream_index_url="  ").upstream is None
    with pytest.raises(ValueError, match="http"):
        Settings(upstream_index_url="file:///srv/mirror")
