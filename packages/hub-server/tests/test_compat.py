"""The request sequence of the public ``prime`` CLI 0.18 (`prime env push/info/install/pull/
version list/version delete/delete`), replayed against the hub."""

from __future__ import annotations

import hashlib

import httpx
from prime_hub_testkit import make_targz, make_wheel, row_counts

API = "/api/v1/environmentshub"


def _content_hash(files: dict[str, bytes]) -> str:
    h = hashlib.sha256()
    for path in sorted(files):
        h.update(f"file:{path}".encode())
        h.update(files[path])
    return h.hexdigest()


def _push(c: httpx.Client, name: str, version: str, visibility: str = "PUBLIC", marker: str = ""):
    """Steps 6-12 of `prime env push` (reference §2.4)."""
    mod = name.replace("-", "_")
    tree = {
        "pyproject.toml": f'[project]\nname = "{name}"\nversion = "{version}"\n'.encode(),
        "README.md": b"# env\n",
        f"{mod}.py": f"def load_environment(): return {marker!r}\n".encode(),
    }
    chash = _content_hash(tree)
    resolved = c.post(f"{API}/resolve", json={"name": name, "visibility": visibility})
    assert resolved.status_code == 200, resolved.text
    env_id = resolved.json()["data"]["id"]
    wfn, wheel = make_wheel(name, version, body=f"MARKER = {marker!r}\n")
    meta = {
        "description": "compat env",
        "tags": ["compat"],
        "dependencies": [],
        "python_requires": ">=3.8",
    }
    r = c.post(
        f"{API}/{env_id}/wheels",
        json={
            "content_hash": chash,
            "filename": wfn,
            "sha256": hashlib.sha256(wheel).hexdigest(),
            "size": len(wheel),
            "semantic_version": version,
            "metadata": meta,
        },
    )
    if r.status_code != 200:
        return r
    data = r.json()["data"]
    put = httpx.put(
        data["upload_url"], content=wheel, headers={"Content-Type": "application/octet-stream"}
    )
    assert put.status_code in (200, 201), put.text
    assert c.post(f"{API}/{env_id}/wheels/{data['wheel_id']}/finalize").status_code == 200
    tarball = make_targz(tree)
    r = c.post(
        f"{API}/{env_id}/versions",
        json={
            "content_hash": chash,
            "filename": f"{name}-{version}-{chash[:8]}.tar.gz",
            "sha256": hashlib.sha256(tarball).hexdigest(),
            "semantic_version": version,
            "metadata": {**meta, "original_filename": f"{name}-{version}.tar.gz"},
        },
    )
    assert r.status_code == 200, r.text
    data = r.json()["data"]
    assert httpx.put(data["upload_url"], content=tarball).status_code in (200, 201)
    return c.post(f"{API}/{env_id}/versions/{data['version_id']}/finalize")


def _announce_wheel(c: httpx.Client, env_id: str, dist: str, version: str):
    """Step 7 of `prime env push` alone, without content hash or metadata: a wheel of `dist`
    announced for upload; returns the hub's answer and the wheel's bytes."""
    wfn, wheel = make_wheel(dist, version)
    r = c.post(
        f"{API}/{env_id}/wheels",
        json={
            "filename": wfn,
            "sha256": hashlib.sha256(wheel).hexdigest(),
            "size": len(wheel),
            "semantic_version": version,
        },
    )
    return r, wheel


def test_prime_cli_push_then_info_install_pull(server, user, uid):
    owner, token = user
    with server.client(token) as c:
        who = c.get("/api/v1/user/whoami").json()["data"]
        assert who["slug"] == owner
        done = _push(c, uid, "0.1.0")
        assert done.status_code == 200, done.text
        assert done.json()["data"]["success"] is True
        assert row_counts(server.hub, uid) == {
            "environments": 1,
            "versions": 1,
            "files": 2,
            "pending": 0,
        }

        info = c.get(f"{API}/{owner}/{uid}/@latest").json()["data"]
        assert info["semantic_version"] == "0.1.0" and info["visibility"] == "PUBLIC"
        assert info["simple_index_url"] == f"{server.url}/{owner}/simple/"
        assert info["install_index_url"] == info["simple_index_url"]
        assert info["metadata"]["description"] == "compat env"
        assert info["url_dependencies"] == []
        wheel = c.get(info["wheel_url"], follow_redirects=True)
        assert hashlib.sha256(wheel.content).hexdigest() == info["sha256"]
        tarball = c.get(info["tracked_package_url"], follow_redirects=True)
        assert tarball.status_code == 200 and tarball.content[:2] == b"\x1f\x8b"
        assert c.get(f"{API}/{owner}/{uid}/@0.1.0").json()["data"]["id"] == info["id"]
        status = c.get(f"{API}/{owner}/{uid}/status").json()["data"]
        assert status["latest_version"]["semantic_version"] == "0.1.0"
        # the source archive is not an installable sdist: the index lists only the wheel
        page = c.get(
            f"/{owner}/simple/{uid}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"}
        ).json()
        assert [f["filename"] for f in page["files"]] == [make_wheel(uid, "0.1.0")[0]]
        listing = c.get(f"{API}/", params={"owner": owner, "limit": 5, "offset": 0}).json()
        assert listing["total_count"] == 1
        assert listing["data"][0]["owner"]["name"] == owner
        assert listing["data"][0]["latest_version"] == "0.1.0"


def test_prime_cli_duplicate_content_hash_and_version_rules(server, user, uid):
    owner, token = user
    with server.client(token) as c:
        assert _push(c, uid, "0.1.0").status_code == 200
        dup = _push(c, uid, "0.1.0")
        assert dup.status_code == 409
        detail = dup.json()["detail"]
        assert "content hash" in detail and "already exists" in detail  # what the CLI greps for
        changed = _push(c, uid, "0.1.0", marker="changed")
        assert changed.status_code == 409 and "bump the version" in changed.json()["detail"]
        assert _push(c, uid, "0.2.0", marker="v2").status_code == 200
        versions = c.get(f"{API}/{owner}/{uid}/versions").json()["data"]["versions"]
        assert [v["semantic_version"] for v in versions] == ["0.2.0", "0.1.0"]
        # `prime env version delete owner/name <content hash>`
        old_hash = versions[1]["content_hash"]
        assert c.delete(f"{API}/{owner}/{uid}/@{old_hash[:12]}").status_code == 200
        assert [
            v["semantic_version"]
            for v in c.get(f"{API}/{owner}/{uid}/versions").json()["data"]["versions"]
        ] == ["0.2.0"]
        assert c.delete(f"{API}/{owner}/{uid}").status_code == 200
        assert c.get(f"{API}/{owner}/{uid}/@latest").status_code == 404


def test_prime_cli_half_finished_push_publishes_nothing(server, user, uid):
    owner, token = user
    with server.client(token) as c:
        env_id = c.post(f"{API}/resolve", json={"name": uid}).json()["data"]["id"]
        r, wheel = _announce_wheel(c, env_id, uid, "0.1.0")
        data = r.json()["data"]
        # a corrupted PUT is refused by hash: at once by the hub, at finalize behind S3
        bad = httpx.put(data["upload_url"], content=wheel[:-10])
        if bad.status_code in (200, 201):
            fin = c.post(f"{API}/{env_id}/wheels/{data['wheel_id']}/finalize")
            assert fin.status_code == 400 and "sha256" in fin.json()["detail"], fin.text
        else:
            assert bad.status_code == 400 and "sha256" in bad.json()["detail"]
        assert httpx.put(data["upload_url"], content=wheel).status_code in (200, 201)
        assert c.post(f"{API}/{env_id}/wheels/{data['wheel_id']}/finalize").status_code == 200
        # the CLI stops here (crash, Ctrl-C): nothing is visible
        assert c.get(f"{API}/{owner}/{uid}/@latest").status_code == 404
        assert (
            c.get(
                f"/{owner}/simple/{uid}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"}
            ).json()["files"]
            == []
        )
        assert row_counts(server.hub, uid)["versions"] == 0


def test_prime_cli_push_with_a_name_that_differs_from_the_distribution(server, user, uid):
    _owner, token = user
    with server.client(token) as c:
        env_id = c.post(f"{API}/resolve", json={"name": f"{uid}-renamed"}).json()["data"]["id"]
        r, _wheel = _announce_wheel(c, env_id, uid, "0.1.0")
        assert r.status_code == 400 and "must agree" in r.json()["detail"]


def test_prime_cli_private_environment(server, user, uid):
    owner, token = user
    with server.client(token) as c:
        assert _push(c, uid, "1.0.0", visibility="PRIVATE").status_code == 200
        info = c.get(f"{API}/{owner}/{uid}/@latest").json()["data"]
        assert info["visibility"] == "PRIVATE"
        # no anonymous index: the CLI pulls the source with its key instead
        assert "simple_index_url" not in info and "wheel_url" not in info
        pulled = c.get(info["package_url"], follow_redirects=True)
        assert pulled.status_code == 200
    with server.client() as anon:
        assert anon.get(f"{API}/{owner}/{uid}/@latest").status_code == 404
        assert anon.get(info["package_url"]).status_code == 404
        r = anon.post(f"{API}/resolve", json={"name": uid})
        assert r.status_code == 401 and "API key" in r.json()["detail"]
