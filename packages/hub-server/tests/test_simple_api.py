"""The simple repository API: negotiation, PEP 658/691/700/592 fields, caching headers."""

from __future__ import annotations

import hashlib
import time

from prime_hub_testkit import make_sdist, make_wheel, publish

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
        assert c.get("/simple/does-not-exist/").status_code == 404


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
