"""Direct uploads: announce, PUT the bytes (to presigned S3 when the store is S3), complete."""

from __future__ import annotations

import hashlib

import httpx
from prime_hub_testkit import make_sdist, make_wheel, one_version, row_counts


def _announce(c: httpx.Client, owner: str, name: str, files: list[tuple[str, bytes]]) -> list[dict]:
    r = c.post(
        f"/api/v1/environments/{owner}/{name}/uploads",
        json={
            "version": "1.0.0",
            "files": [
                {"filename": fn, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
                for fn, data in files
            ],
        },
    )
    assert r.status_code == 200, r.text
    return r.json()["uploads"]


def test_direct_upload_publishes_atomically(server, user, uid):
    owner, token = user
    files = [make_wheel(uid, "1.0.0"), make_sdist(uid, "1.0.0")]
    with server.client(token) as c:
        uploads = _announce(c, owner, uid, files)
        for up in uploads:
            if server.s3_proxy is not None:  # bytes go straight to the object store
                assert up["upload_url"].startswith(f"http://127.0.0.1:{server.s3_proxy.port}/")
                assert "Signature" in up["upload_url"]
            else:
                assert up["upload_url"].startswith(f"{server.url}/api/v1/uploads/")
        # only one file uploaded: completing must fail and publish nothing
        data = dict(files)
        first = uploads[0]
        assert httpx.put(first["upload_url"], content=data[first["filename"]]).status_code == 200
        r = c.post(
            f"/api/v1/environments/{owner}/{uid}/uploads/complete",
            json={"upload_ids": [u["upload_id"] for u in uploads]},
        )
        assert r.status_code == 400 and "never uploaded" in r.json()["detail"]
        assert row_counts(server.hub, uid)["versions"] == 0
        second = uploads[1]
        assert httpx.put(second["upload_url"], content=data[second["filename"]]).status_code == 200
        r = c.post(
            f"/api/v1/environments/{owner}/{uid}/uploads/complete",
            json={"upload_ids": [u["upload_id"] for u in uploads]},
        )
        assert r.status_code == 201, r.text
        assert {f["filename"] for f in r.json()["files"]} == set(data)
    assert row_counts(server.hub, uid) == one_version(files=2)
    with server.client() as c:
        wheel_url = r.json()["files"][0]["url"]
        resp = c.get(wheel_url)
        if server.s3_proxy is not None:
            assert resp.status_code == 302 and "Signature" in resp.headers["location"]
        got = c.get(wheel_url, follow_redirects=True).content
        assert hashlib.sha256(got).hexdigest() in {
            hashlib.sha256(d).hexdigest() for d in data.values()
        }


def test_direct_upload_rejects_bytes_that_differ_from_the_announcement(server, user, uid):
    owner, token = user
    fn, wheel = make_wheel(uid, "1.0.0")
    with server.client(token) as c:
        (up,) = _announce(c, owner, uid, [(fn, wheel)])
        other = make_wheel(uid, "1.0.0", body="EVIL = 1\n")[1]
        put = httpx.put(up["upload_url"], content=other)
        r = c.post(
            f"/api/v1/environments/{owner}/{uid}/uploads/complete",
            json={"upload_ids": [up["upload_id"]]},
        )
        if put.status_code == 200:  # S3 accepted the bytes; the hub refuses them at completion
            assert r.status_code == 400 and "sha256" in r.json()["detail"]
        else:  # longer than announced: cut off at the announced size; else a sha mismatch
            assert put.status_code == (413 if len(other) > len(wheel) else 400)
        assert row_counts(server.hub, uid)["versions"] == 0
    with server.client() as anon:
        r = anon.post(
            f"/api/v1/environments/{owner}/{uid}/uploads",
            json={"version": "1", "files": [{"filename": fn, "sha256": "0" * 64, "size": 1}]},
        )
        assert r.status_code == 401
