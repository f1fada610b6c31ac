"""Concurrent pushes of one version: exactly one wins; the database stays consistent."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from prime_hub_testkit import make_wheel, one_version, publish, row_counts


def _race(server, token, owner, name, payloads):
    with ThreadPoolExecutor(len(payloads)) as pool:
        return list(pool.map(lambda files: publish(server, token, owner, name, files), payloads))


def test_concurrent_different_content_exactly_one_wins(server, user, uid):
    owner, token = user
    payloads = [[make_wheel(uid, "1.0.0", body=f"VARIANT = {i}\n")] for i in range(6)]
    results = _race(server, token, owner, uid, payloads)
    codes = sorted(r.status_code for r in results)
    assert codes == [201, 409, 409, 409, 409, 409], [r.text for r in results]
    for r in results:
        if r.status_code == 409:
            assert "already exists with different content" in r.json()["detail"]
    winner = next(r for r in results if r.status_code == 201).json()
    assert row_counts(server.hub, uid) == one_version(files=1)
    with server.client() as c:
        files = c.get(f"/api/v1/environments/{owner}/{uid}/versions/1.0.0").json()["files"]
        assert files[0]["sha256"] == winner["files"][0]["sha256"]
        data = c.get(files[0]["url"], follow_redirects=True).content
    import hashlib

    assert hashlib.sha256(data).hexdigest() == winner["files"][0]["sha256"]


def test_concurrent_identical_pushes_one_creates(server, user, uid):
    owner, token = user
    files = [make_wheel(uid, "1.0.0")]
    results = _race(server, token, owner, uid, [files] * 6)
    assert sorted(r.status_code for r in results) == [200] * 5 + [201], [r.text for r in results]
    assert sum(r.json()["created"] for r in results) == 1
    assert row_counts(server.hub, uid) == one_version(files=1)


def test_concurrent_new_environments_with_colliding_names(server, user, uid):
    owner, token = user
    spellings = [uid, uid.upper(), f"{uid[:3]}_{uid[3:]}", f"{uid[:3]}.{uid[3:]}"]
    payloads = [[make_wheel(n, f"1.0.{i}")] for i, n in enumerate(spellings)]
    with ThreadPoolExecutor(len(payloads)) as pool:
        results = list(
            pool.map(
                lambda p: publish(server, token, owner, p[1], p[0]),
                zip(payloads, spellings, strict=True),
            )
        )
    statuses = [r.status_code for r in results]
    # e12_3 normalises to e12-3, which is not the same name as e123: only exact PEP 503 twins merge
    assert all(s == 201 for s in statuses), [r.text for r in results]
    assert row_counts(server.hub, uid)["environments"] == 1
    assert row_counts(server.hub, uid)["versions"] == 2
