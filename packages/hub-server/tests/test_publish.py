"""Publishing through the JSON API: atomic versions, immutability, names, yank and delete."""

from __future__ import annotations

from prime_hub_testkit import make_sdist, make_wheel, one_version, publish, row_counts

JSON = {"Accept": "application/vnd.pypi.simple.v1+json"}


def _index(server, owner, name, token=None):
    with server.client(token) as c:
        return c.get(f"/{owner}/simple/{name}/", headers=JSON)


def test_publish_wheel_and_sdist_in_one_version(server, user, uid):
    owner, token = user
    wheel, sdist = make_wheel(uid, "1.0.0", deps=["numpy>=1"]), make_sdist(uid, "1.0.0")
    r = publish(server, token, owner, uid, [wheel, sdist])
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["version"] == "1.0.0" and body["created"] is True
    assert {f["filename"] for f in body["files"]} == {wheel[0], sdist[0]}
    assert body["dependencies"] == ["numpy>=1"]
    assert body["requires_python"] == ">=3.8"
    assert body["uploader"] == owner
    with server.client() as c:
        info = c.get(f"/api/v1/environments/{owner}/{uid}").json()
    assert info["latest_version"] == "1.0.0"
    assert info["description"] == "a test environment"
    assert "README of" in info["readme"]
    assert set(info["tags"]) == {"test", "env"}
    assert row_counts(server.hub, uid) == one_version(files=2)


def test_identical_reupload_is_idempotent(server, user, uid):
    owner, token = user
    files = [make_wheel(uid, "1.0.0")]
    assert publish(server, token, owner, uid, files).status_code == 201
    again = publish(server, token, owner, uid, files)
    assert again.status_code == 200, again.text
    assert again.json()["created"] is False
    assert row_counts(server.hub, uid)["files"] == 1


def test_different_content_under_existing_file_is_refused(server, user, uid):
    owner, token = user
    assert publish(server, token, owner, uid, [make_wheel(uid, "1.0.0")]).status_code == 201
    other = make_wheel(uid, "1.0.0", body="CHANGED = True\n")
    r = publish(server, token, owner, uid, [other])
    assert r.status_code == 409
    assert "already exists with different content" in r.json()["detail"]
    assert "bump the version" in r.json()["detail"]


def test_metadata_must_agree_with_declared_name_and_version(server, user, uid):
    owner, token = user
    cases = [
        (make_wheel(uid, "1.0.0", meta_name="something-else"), "says Name"),
        (make_wheel(uid, "1.0.0", meta_version="2.0.0"), "says Version"),
        (make_wheel("other-name", "1.0.0"), "but the upload says"),
    ]
    for files, message in cases:
        r = publish(server, token, owner, uid, [files])
        assert r.status_code == 400, r.text
        assert message in r.json()["detail"]
    # all files of a version must carry that version
    r = publish(server, token, owner, uid, [make_wheel(uid, "1.0.0"), make_sdist(uid, "1.0.1")])
    assert r.status_code == 400 and "same version" in r.json()["detail"]
    assert row_counts(server.hub, uid)["versions"] == 0


def test_names_normalise_to_one_environment(server, user, uid):
    owner, token = user
    spelled = f"My_{uid.upper()}"
    assert publish(server, token, owner, spelled, [make_wheel(spelled, "1.0")]).status_code == 201
    dashed = f"my-{uid}"
    r = publish(server, token, owner, dashed, [make_wheel(dashed, "1.1")])
    assert r.status_code == 201, r.text
    assert row_counts(server.hub, dashed)["environments"] == 1
    with server.client() as c:
        assert c.get(f"/api/v1/environments/{owner}/my.{uid.upper()}").json()["name"] == spelled
        redirect = c.get(f"/{owner}/simple/My_{uid}/", follow_redirects=False)
        assert redirect.status_code == 301
        assert redirect.headers["location"] == f"/{owner}/simple/my-{uid}/"
        versions = c.get(f"/{owner}/simple/my-{uid}/", headers=JSON).json()["versions"]
    assert versions == ["1.0", "1.1"]


def test_invalid_names_and_versions(server, user):
    owner, token = user
    r = publish(server, token, owner, "-bad-", [make_wheel("bad", "1.0")])
    assert r.status_code == 400 and "invalid environment name" in r.json()["detail"]
    _, data = make_wheel("okname", "1.0")
    r = publish(server, token, owner, "okname", [("okname-not.a.version-py3-none-any.whl", data)])
    assert r.status_code == 400 and "invalid wheel file name" in r.json()["detail"]


def test_yank_and_unyank(server, user, uid):
    owner, token = user
    publish(server, token, owner, uid, [make_wheel(uid, "1.0.0")])
    publish(server, token, owner, uid, [make_wheel(uid, "1.1.0")])
    with server.client(token) as c:
        r = c.post(
            f"/api/v1/environments/{owner}/{uid}/versions/1.1.0/yank",
            json={"reason": "broken reward"},
        )
        assert r.status_code == 200, r.text
        assert c.get(f"/api/v1/environments/{owner}/{uid}").json()["latest_version"] == "1.0.0"
    files = _index(server, owner, uid).json()["files"]
    yanked = {f["filename"]: f["yanked"] for f in files}
    assert yanked[make_wheel(uid, "1.1.0")[0]] == "broken reward"
    assert yanked[make_wheel(uid, "1.0.0")[0]] is False
    with server.client() as c:
        html = c.get(f"/{owner}/simple/{uid}/").text
    assert 'data-yanked="broken reward"' in html
    with server.client(token) as c:
        assert (
            c.post(f"/api/v1/environments/{owner}/{uid}/versions/1.1.0/unyank").status_code == 200
        )
    assert all(f["yanked"] is False for f in _index(server, owner, uid).json()["files"])


def test_deleted_version_never_frees_its_file_names(server, user, uid):
    owner, token = user
    files = [make_wheel(uid, "1.0.0")]
    publish(server, token, owner, uid, files)
    with server.client(token) as c:
        assert c.delete(f"/api/v1/environments/{owner}/{uid}/versions/1.0.0").status_code == 200
        assert c.get(f"/api/v1/environments/{owner}/{uid}/versions").json()["versions"] == []
    r = publish(server, token, owner, uid, files)
    assert r.status_code == 409 and "never reused" in r.json()["detail"]
    # even after deleting the whole environment
    with server.client(token) as c:
        assert c.delete(f"/api/v1/environments/{owner}/{uid}").status_code == 200
        assert c.get(f"/api/v1/environments/{owner}/{uid}").status_code == 404
    r = publish(server, token, owner, uid, files)
    assert r.status_code == 409 and "never reused" in r.json()["detail"]
    assert publish(server, token, owner, uid, [make_wheel(uid, "1.0.1")]).status_code == 201


def test_sdist_added_to_existing_version_but_only_once(server, user, uid):
    owner, token = user
    assert publish(server, token, owner, uid, [make_wheel(uid, "2.0")]).status_code == 201
    r = publish(server, token, owner, uid, [make_sdist(uid, "2.0")])
    assert r.status_code == 201 and r.json()["created"] is False
    fn, _ = make_sdist(uid, "2.0")
    assert row_counts(server.hub, uid)["files"] == 2
    assert fn in {f["filename"] for f in _index(server, owner, uid).json()["files"]}


def test_list_search_and_pagination(server, user, uid):
    owner, token = user
    for i in range(3):
        name = f"{uid}-s{i}"
        publish(server, token, owner, name, [make_wheel(name, "1.0")])
    with server.client() as c:
        page1 = c.get(
            "/api/v1/environments",
            params={"owner": owner, "limit": 2, "sort": "name", "order": "asc"},
        ).json()
        page2 = c.get(
            "/api/v1/environments",
            params={"owner": owner, "limit": 2, "offset": 2, "sort": "name", "order": "asc"},
        ).json()
        assert page1["total"] == 3
        assert [e["name"] for e in page1["items"] + page2["items"]] == [
            f"{uid}-s{i}" for i in range(3)
        ]
        found = c.get("/api/v1/environments", params={"search": f"{uid}-s1"}).json()
        assert [e["name"] for e in found["items"]] == [f"{uid}-s1"]
        tagged = c.get("/api/v1/environments", params={"owner": owner, "tag": "env"}).json()
        assert tagged["total"] == 3
        assert (
            c.get("/api/v1/environments", params={"owner": owner, "tag": "nope"}).json()["total"]
            == 0
        )
        html = c.get(f"/{owner}/{uid}-s1")
        assert html.status_code == 200 and "pip install --index-url" in html.text


def test_openapi_is_published(server):
    with server.client() as c:
        spec = c.get("/openapi.json").json()
    assert "/legacy/" in spec["paths"]
    assert "/api/v1/environments/{owner}/{name}/versions" in spec["paths"]
