"""The request sequence of the public ``prime`` CLI 0.18 (`prime env push/info/install/pull/
version list/version delete/delete`), replayed against the hub."""

from __future__ import annotations

import hashlib

import httpx
from prime_hub_testkit import make_targz, make_wheel, one_version, row_counts

API = "/api/v1/environmentshub"


def _content_hash(files: dict[str, bytes]) -> str:
    h = hashlib.sha256()
    for path in sorted(files):
        h.update(f"file:{path}".encode())
        h.update(files[path])
    return h.hexdigest()


def _push(
    c: httpx.Client,
    name: str,
    version: str,
    visibility: str = "PUBLIC",
    marker: str = "",
    extra: dict[str, bytes] | None = None,
    owner: str | None = None,
):
    """Steps 6-12 of `prime env push` as PyPI `prime` 0.18.0 runs them (`push` in
    `prime_cli/commands/env.py`); ``extra`` adds files to the source, ``owner`` pushes into
    another namespace (`--owner`)."""
    mod = name.replace("-", "_")
    tree = {
        "pyproject.toml": f'[project]\nname = "{name}"\nversion = "{version}"\n'.encode(),
        "README.md": b"# env\n",
        f"{mod}.py": f"def load_environment(): return {marker!r}\n".encode(),
        **(extra or {}),
    }
    chash = _content_hash(tree)
    body = {"name": name, "visibility": visibility, **({"owner_slug": owner} if owner else {})}
    resolved = c.post(f"{API}/resolve", json=body)
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
        assert row_counts(server.hub, uid) == one_version(files=2)

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


def test_prime_cli_whoami_scope_is_a_mapping_of_scope_to_read_write(server, user, uid):
    """`prime whoami` iterates ``scope.items()`` for its "Token Permissions" table."""
    owner, token = user
    _, read_token = server.hub.accounts.create_token(owner, "read")
    _, one_env = server.hub.accounts.create_token(owner, "publish", environment=f"{owner}/{uid}")
    expected = {
        token: {"environments": {"read": True, "write": True}},
        read_token: {"environments": {"read": True, "write": False}},
        one_env: {f"environment {owner}/{uid}": {"read": True, "write": True}},
    }
    for tok, scope in expected.items():
        with server.client(tok) as c:
            data = c.get("/api/v1/user/whoami").json()["data"]
        assert data["scope"] == scope
        assert data["slug"] == owner and isinstance(data["account_limits"], dict)
    with server.client() as anon:
        r = anon.get("/api/v1/user/whoami")
        assert r.status_code == 401 and "API key" in r.json()["detail"]


INSPECT_TREE = {
    "data/rows.jsonl": b'{"q": "1+1"}\n',
    "data/deep/more.txt": b"deep\n",
    "notes/\u00e9t\u00e9.md": "caf\u00e9 \u00e9t\u00e9\n".encode(),
    "blob.bin": b"\x00\x01\x02",
}


def _inspect(c: httpx.Client, ref: str, **params):
    return c.get(f"{ref}/inspect", params=params)


def test_prime_cli_inspect_lists_and_reads_the_source_archive(server, user, uid):
    """`prime env inspect owner/name@version [path]` (GET .../@{ref}/inspect)."""
    owner, token = user
    with server.client(token) as c:
        assert _push(c, uid, "0.1.0", extra=INSPECT_TREE).status_code == 200
        assert _push(c, uid, "0.2.0", marker="v2").status_code == 200
        ref = f"{API}/{owner}/{uid}/@0.1.0"
        root = _inspect(c, ref).json()["data"]
        assert root["kind"] == "directory" and root["path"] == "" and root["truncated"] is False
        assert [(e["path"], e["is_directory"]) for e in root["entries"]] == [
            ("data", True),
            ("notes", True),
            ("README.md", False),
            ("blob.bin", False),
            (f"{uid}.py", False),
            ("pyproject.toml", False),
        ]
        readme = next(e for e in root["entries"] if e["path"] == "README.md")
        assert readme == {
            "name": "README.md",
            "path": "README.md",
            "is_directory": False,
            "size": 6,
        }
        sub = _inspect(c, ref, path="data/").json()["data"]
        assert [e["path"] for e in sub["entries"]] == ["data/deep", "data/rows.jsonl"]
        assert sub["entry"]["is_directory"] is True
        f = _inspect(c, ref, path="data/rows.jsonl").json()["data"]
        assert f["kind"] == "file" and f["content"] == '{"q": "1+1"}\n'
        assert f["truncated"] is False and f["total_bytes"] == 13
        assert f["version"] == "0.1.0" and f["entry"]["size"] == 13
        # --max-bytes cuts on a character boundary and says so
        cut = _inspect(c, ref, path="notes/\u00e9t\u00e9.md", max_bytes=4).json()["data"]
        assert cut["content"] == "caf" and cut["truncated"] is True and cut["total_bytes"] == 12
        # `latest` and a content-hash prefix address versions like every other @{ref}
        latest = _inspect(c, f"{API}/{owner}/{uid}/@latest", path=f"{uid}.py").json()["data"]
        assert "v2" in latest["content"] and latest["version"] == "0.2.0"
        chash = c.get(f"{API}/{owner}/{uid}/@0.1.0").json()["data"]["content_hash"]
        by_hash = _inspect(c, f"{API}/{owner}/{uid}/@{chash[:12]}").json()["data"]
        assert by_hash["version_id"] == root["version_id"]
        # bad input: one clear line each
        for path, status, words in (
            ("../etc/passwd", 400, "invalid path"),
            ("data/../../x", 400, "invalid path"),
            ("nope.py", 404, "no file or directory"),
            ("blob.bin", 400, "binary"),
        ):
            r = _inspect(c, ref, path=path)
            assert r.status_code == status and words in r.json()["detail"], (path, r.text)
        r = _inspect(c, ref, max_bytes=500_001)
        assert r.status_code == 422 and "max_bytes" in r.json()["detail"]
        assert _inspect(c, f"{API}/{owner}/{uid}/@9.9.9").status_code == 404


def test_prime_cli_inspect_respects_private_access(server, user, uid):
    """Only callers who may read the environment see its source; everyone else gets the same
    404 as for an environment that does not exist."""
    owner, token = user
    _outsider, outsider_token = server.new_user("out")
    reader, reader_token = server.new_user("rd")
    org = f"o{uid}"
    server.hub.accounts.create_org(org, owner)
    server.hub.accounts.set_member(org, reader, "reader")
    _, elsewhere = server.hub.accounts.create_token(owner, "read", environment=f"{owner}/other")
    with server.client(token) as c:
        assert _push(c, uid, "1.0.0", visibility="PRIVATE").status_code == 200
        assert _push(c, uid, "1.0.0", visibility="PRIVATE", owner=org).status_code == 200
    for ref in (f"{API}/{owner}/{uid}/@latest", f"{API}/{org}/{uid}/@latest"):
        with server.client(token) as c:
            assert _inspect(c, ref, path="README.md").json()["data"]["content"] == "# env\n"
        for tok in (None, outsider_token, elsewhere):
            with server.client(tok) as c:
                r = _inspect(c, ref, path="README.md")
                assert r.status_code == 404 and "not found" in r.json()["detail"], (tok, r.text)
                assert _inspect(c, ref).status_code == 404
    with server.client(reader_token) as c:
        assert _inspect(c, f"{API}/{org}/{uid}/@latest").status_code == 200
        assert _inspect(c, f"{API}/{owner}/{uid}/@latest").status_code == 404


def test_prime_cli_version_list_fields_mean_what_the_cli_prints(server, user, uid):
    """`prime env version list` prints ``sha256`` as "Content Hash" and ``size`` as
    "N artifacts"."""
    owner, token = user
    with server.client(token) as c:
        assert _push(c, uid, "0.1.0").status_code == 200
        (row,) = c.get(f"{API}/{owner}/{uid}/versions").json()["data"]["versions"]
        info = c.get(f"{API}/{owner}/{uid}/@0.1.0").json()["data"]
    assert row["sha256"] == row["content_hash"] == info["content_hash"]
    assert row["size"] == 2 == len(row["artifacts"])
    assert sorted(a["kind"] for a in row["artifacts"]) == ["source", "wheel"]
    wheel = next(a for a in row["artifacts"] if a["kind"] == "wheel")
    assert wheel["sha256"] == info["sha256"]
    assert row["total_bytes"] == sum(a["size"] for a in row["artifacts"]) > 2


def test_prime_cli_links_login_and_hosted_only_features(server, user, uid):
    owner, token = user
    with server.client(token) as c:
        assert _push(c, uid, "0.1.0").status_code == 200
        env_id = c.get(f"{API}/{owner}/{uid}/@latest").json()["data"]["id"]
        # the "View on Environments Hub" link `prime env push` prints (frontend = the hub)
        r = c.get(f"/dashboard/environments/{owner}/{uid}")
        assert r.status_code == 302 and r.headers["location"] == f"/{owner}/{uid}"
        page = c.get(f"/dashboard/environments/{owner}/{uid}", follow_redirects=True)
        assert page.status_code == 200 and uid in page.text
        assert c.get("/dashboard/tokens").headers["location"] == "/settings/tokens"
        # `prime login`: refused with the token-based ways in
        r = c.post("/api/v1/auth_challenge/generate", json={"encryptionPublicKey": "x"})
        assert r.status_code == 501
        assert "prime config set-api-key" in r.json()["detail"]
        assert f"{server.url}/settings/tokens" in r.json()["detail"]
        for method, path in (
            ("GET", f"{API}/{env_id}/secrets"),
            ("POST", f"{API}/{env_id}/variables"),
            ("PATCH", f"{API}/{env_id}/variables/v1"),
            ("DELETE", f"{API}/{env_id}/secrets/link/g1"),
            ("POST", f"{API}/{owner}/{uid}/fork"),
        ):
            r = c.request(method, path, json={})
            assert r.status_code == 501 and "this hub" in r.json()["detail"], (method, path)
    # an owner named like an id may still have an environment called "secrets"
    digits = str(int(uid[1:], 16))[:9]
    server.hub.accounts.create_user(digits)
    _, digits_token = server.hub.accounts.create_token(digits, "publish")
    with server.client(digits_token) as c:
        assert _push(c, "secrets", "0.1.0").status_code == 200
        assert c.get(f"{API}/{digits}/secrets/@latest").status_code == 200
        assert c.delete(f"{API}/{digits}/secrets").status_code == 200
        assert c.get(f"{API}/{digits}/secrets/@latest").status_code == 404
