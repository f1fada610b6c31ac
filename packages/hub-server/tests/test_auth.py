"""Token scopes, roles and private visibility, checked on every route that exposes data."""

from __future__ import annotations

import pytest
from prime_hub_testkit import make_sdist, make_wheel, publish

JSON = {"Accept": "application/vnd.pypi.simple.v1+json"}


def _read_routes(owner: str, name: str) -> list[str]:
    wheel = make_wheel(name, "1.0.0")[0]
    return [
        f"/{owner}/simple/{name}/",
        f"/simple/{name}/",
        f"/files/{owner}/{name}/{wheel}",
        f"/files/{owner}/{name}/{wheel}.metadata",
        f"/api/v1/environments/{owner}/{name}",
        f"/api/v1/environments/{owner}/{name}/versions",
        f"/api/v1/environments/{owner}/{name}/versions/1.0.0",
        f"/api/v1/environments/{owner}/{name}/evals",
        f"/api/v1/environments/{owner}/{name}/versions/1.0.0/evals",
        f"/api/v1/environmentshub/{owner}/{name}/@latest",
        f"/api/v1/environmentshub/{owner}/{name}/status",
        f"/api/v1/environmentshub/{owner}/{name}/versions",
        f"/{owner}/{name}",
    ]


@pytest.fixture
def private_env(server, user, uid):
    owner, token = user
    r = publish(
        server,
        token,
        owner,
        uid,
        [make_wheel(uid, "1.0.0"), make_sdist(uid, "1.0.0")],
        visibility="private",
    )
    assert r.status_code == 201, r.text
    return owner, token, uid


def test_private_environment_is_invisible_without_a_granting_token(server, private_env):
    owner, token, name = private_env
    _, stranger = server.new_user("stranger")
    for tok in (None, stranger):
        with server.client(tok) as c:
            for path in _read_routes(owner, name):
                r = c.get(path, follow_redirects=False)
                assert r.status_code == 404, (
                    f"{path} with {'stranger' if tok else 'no'} token: {r.status_code}"
                )
            listing = c.get("/api/v1/environments", params={"owner": owner}).json()
            assert listing["total"] == 0
            hub_listing = c.get("/api/v1/environmentshub/", params={"owner": owner}).json()
            assert hub_listing["total_count"] == 0
            assert name not in c.get(f"/{owner}/simple/").text
            assert name not in c.get("/simple/").text
    with server.client(token) as c:
        for path in _read_routes(owner, name):
            # S3 answers downloads with a redirect to a presigned URL
            assert c.get(path).status_code in (200, 302), path
        assert c.get("/api/v1/environments", params={"owner": owner}).json()["total"] == 1


def test_pip_style_basic_auth_reads_private_index(server, private_env):
    owner, token, name = private_env
    with server.client() as c:
        assert c.get(f"/{owner}/simple/{name}/", auth=("__token__", token)).status_code == 200
        assert (
            c.get(f"/{owner}/simple/{name}/", auth=("__token__", "phub_wrong")).status_code == 401
        )


def test_token_scopes(server, uid):
    owner, _ = server.new_user("scoped")
    _, read_tok = server.hub.accounts.create_token(owner, "read")
    _, env_tok = server.hub.accounts.create_token(
        owner, "publish", environment=f"{owner}/{uid.upper()}"
    )
    files = [make_wheel(uid, "1.0.0")]
    r = publish(server, read_tok, owner, uid, files)
    assert r.status_code == 403 and "publish" in r.json()["detail"]
    other = f"{uid}-other"
    r = publish(server, env_tok, owner, other, [make_wheel(other, "1.0.0")])
    assert r.status_code == 403
    assert publish(server, env_tok, owner, uid, files).status_code == 201
    # an environment-bound token sees only that environment's private data
    publish(server, env_tok, owner, uid, [make_wheel(uid, "1.0.1")])
    with server.client(env_tok) as c:
        assert (
            c.patch(
                f"/api/v1/environments/{owner}/{uid}", json={"visibility": "private"}
            ).status_code
            == 200
        )
        assert c.get(f"/{owner}/simple/{uid}/").status_code == 200
        # and cannot mint broader tokens
        assert c.post("/api/v1/tokens", json={"scope": "publish"}).status_code == 403
    with server.client(read_tok) as c:
        assert c.get(f"/{owner}/simple/{uid}/").status_code == 200
        for method, path in [
            ("post", f"/api/v1/environments/{owner}/{uid}/versions/1.0.0/yank"),
            ("delete", f"/api/v1/environments/{owner}/{uid}/versions/1.0.0"),
            ("delete", f"/api/v1/environments/{owner}/{uid}"),
            ("patch", f"/api/v1/environments/{owner}/{uid}"),
        ]:
            kw = {"json": {}} if method in ("post", "patch") else {}
            r = getattr(c, method)(path, **kw)
            assert r.status_code == 403, (method, path, r.status_code)


def test_revoked_and_unknown_tokens(server, uid):
    owner, token = server.new_user("revoke")
    with server.client(token) as c:
        me = c.get("/api/v1/whoami").json()
        assert me["username"] == owner
        new = c.post("/api/v1/tokens", json={"scope": "read", "name": "ci"}).json()
        assert new["token"].startswith("phub_")
        tokens = c.get("/api/v1/tokens").json()["tokens"]
        assert {t["scope"] for t in tokens} == {"publish", "read"}
        assert all("token" not in t for t in tokens)  # secrets are never shown again
        assert c.delete(f"/api/v1/tokens/{me['token']['id']}").status_code == 200
        r = c.get("/api/v1/whoami")
        assert r.status_code == 401 and "revoked" in r.json()["detail"]
    with server.client("phub_doesnotexist") as c:
        assert c.get("/simple/").status_code == 401
    with server.client() as c:  # no token: each account route refuses (Principal.require_user)
        for method, path in (("GET", "whoami"), ("GET", "tokens"), ("DELETE", "tokens/1")):
            r = c.request(method, f"/api/v1/{path}")
            assert (r.status_code, r.json()["detail"]) == (401, "no API token given"), path
    # tokens are stored hashed
    from sqlalchemy import select

    from prime_hub.db.models import ApiToken

    with server.hub.db.reader() as s:
        hashes = list(s.scalars(select(ApiToken.token_hash)))
    assert token not in hashes and all(len(h) == 64 for h in hashes)


def test_organisation_roles(server, uid):
    owner, owner_tok = server.new_user("orgowner")
    reader, reader_tok = server.new_user("reader")
    publisher, publisher_tok = server.new_user("pub")
    org = f"org-{uid}"
    server.hub.accounts.create_org(org, owner)
    server.hub.accounts.set_member(org, reader, "reader")
    server.hub.accounts.set_member(org, publisher, "publisher")
    files = [make_wheel(uid, "1.0.0")]
    assert publish(server, reader_tok, org, uid, files).status_code == 403
    assert publish(server, publisher_tok, org, uid, files, visibility="private").status_code == 201
    with server.client(reader_tok) as c:
        assert c.get(f"/{org}/simple/{uid}/").status_code == 200
        assert (
            c.post(f"/api/v1/environments/{org}/{uid}/versions/1.0.0/yank", json={}).status_code
            == 403
        )
        teams = c.get("/api/v1/user/teams").json()["data"]
        assert [t["slug"] for t in teams] == [org]
    with server.client(owner_tok) as c:
        assert (
            c.post(f"/api/v1/environments/{org}/{uid}/versions/1.0.0/yank", json={}).status_code
            == 200
        )
    server.hub.accounts.set_member(org, reader, None)
    with server.client(reader_tok) as c:
        assert c.get(f"/{org}/simple/{uid}/").status_code == 404
    # twine into an organisation through /{owner}/legacy/
    fn, data = make_wheel(uid, "1.1.0")
    with server.client() as c:
        r = c.post(
            f"/{org}/legacy/",
            auth=("__token__", publisher_tok),
            data={":action": "file_upload"},
            files={"content": (fn, data)},
        )
        assert r.status_code == 201, r.text
        r = c.post(
            f"/{org}/legacy/",
            auth=("__token__", reader_tok),
            data={":action": "file_upload"},
            files={"content": (fn, data)},
        )
        assert r.status_code == 403


def test_org_owners_manage_members_over_http(server, uid):
    owner, owner_tok = server.new_user("mowner")
    member, member_tok = server.new_user("mmember")
    org = f"morg-{uid}"
    server.hub.accounts.create_org(org, owner)
    with server.client(owner_tok) as c:
        assert (
            c.put(f"/api/v1/orgs/{org}/members/{member}", json={"role": "reader"}).status_code
            == 200
        )
        assert (
            c.put(f"/api/v1/orgs/{org}/members/{member}", json={"role": "god"}).status_code == 400
        )
        listed = c.get(f"/api/v1/orgs/{org}/members").json()["members"]
        assert {"username": member, "role": "reader"} in listed
    with server.client(member_tok) as c:
        assert c.get(f"/api/v1/orgs/{org}/members").status_code == 200
        r = c.put(f"/api/v1/orgs/{org}/members/{member}", json={"role": "owner"})
        assert r.status_code == 403  # a reader cannot promote themselves
    with server.client() as anon:
        assert anon.get(f"/api/v1/orgs/{org}/members").status_code == 404
        assert anon.delete(f"/api/v1/orgs/{org}/members/{member}").status_code == 401
    with server.client(owner_tok) as c:
        assert c.delete(f"/api/v1/orgs/{org}/members/{member}").status_code == 200
    with server.client(member_tok) as c:
        assert c.get(f"/api/v1/orgs/{org}/members").status_code == 404
