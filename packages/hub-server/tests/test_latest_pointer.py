"""The stored latest-version pointer (issue 30 item 3): every write that changes an
environment's versions keeps ``environments.latest_version_id`` equal to what the latest rule
(`core.latest._latest_of`) picks from all of its versions, on SQLite and PostgreSQL, and the
listings show it; migration 0006 backfills it for versions published before it existed.
"""

from __future__ import annotations

import pytest
from prime_hub_testkit import make_sdist, make_wheel, publish
from sqlalchemy import create_engine, insert, select

from prime_hub.core.latest import _latest_of
from prime_hub.db.migrate import upgrade
from prime_hub.db.models import Account, Environment, Version


def _stored_and_rule(server, owner: str, name: str) -> tuple[str | None, str | None]:
    """(the version the pointer names, the version the rule picks from all versions)."""
    hub = server.hub
    with hub.db.reader() as s:
        env = hub.ctx.env_query(s, owner, name)
        versions = list(
            s.scalars(select(Version).where(Version.environment_id == env.id).order_by(Version.id))
        )
        by_id = {v.id: v.version for v in versions}
        rule = _latest_of(versions, include_prereleases=True)
        return by_id.get(env.latest_version_id), rule.version if rule else None


def test_pointer_follows_publish_yank_unyank_and_delete(server, uid):
    """Each step changes which version is latest; after each, the stored pointer, the rule
    over all versions, the JSON listing and the environment's own page agree."""
    owner, token = server.new_user()
    base = f"/api/v1/environments/{owner}/{uid}"
    steps = [
        ("publish", "1.0.0", "1.0.0"),
        ("publish", "1.1.0rc1", "1.0.0"),  # a pre-release never beats a final release
        ("publish", "1.10.0", "1.10.0"),  # PEP 440 order, not text order
        ("publish", "1.9.0", "1.10.0"),  # published later, still older
        ("yank", "1.10.0", "1.9.0"),
        ("unyank", "1.10.0", "1.10.0"),
        ("delete", "1.10.0", "1.9.0"),
        ("yank", "1.9.0", "1.0.0"),
        ("yank", "1.0.0", "1.1.0rc1"),  # nothing final left: the newest pre-release
        ("delete", "1.1.0rc1", None),  # only yanked versions left: no latest
        ("unyank", "1.0.0", "1.0.0"),
    ]
    with server.client(token) as c:
        for action, version, expected in steps:
            if action == "publish":
                r = publish(server, token, owner, uid, [make_wheel(uid, version)])
                assert r.status_code == 201, r.text
            elif action == "delete":
                assert c.delete(f"{base}/versions/{version}").status_code == 200
            else:
                r = c.post(f"{base}/versions/{version}/{action}", json={"reason": "bad"})
                assert r.status_code == 200, r.text
            stored, rule = _stored_and_rule(server, owner, uid)
            assert (stored, rule) == (expected, expected), f"after {action} {version}"
            listing = c.get("/api/v1/environments", params={"owner": owner}).json()["items"]
            assert [i["latest_version"] for i in listing] == [expected]
            assert c.get(base).json()["latest_version"] == expected


def test_adding_a_file_to_a_version_keeps_the_pointer(server, uid):
    """A second file of an existing version is no new version: the pointer stays."""
    owner, token = server.new_user()
    for v in ("2.0.0", "1.0.0"):
        assert publish(server, token, owner, uid, [make_wheel(uid, v)]).status_code == 201
    r = publish(server, token, owner, uid, [make_sdist(uid, "1.0.0")])
    assert r.status_code == 201, r.text
    assert _stored_and_rule(server, owner, uid) == ("2.0.0", "2.0.0")


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_migration_backfills_the_pointer(backend, database_url):
    """Versions published before 0006 (rows written at 0005) get the pointer the rule picks."""
    engine = create_engine(database_url(backend, "prime_hub_backfill"))
    try:
        upgrade(engine, "0005")
        published = {
            "plain": (["1.0", "1.10", "1.9"], [], "1.10"),
            "yanked-top": (["1.0", "2.0"], ["2.0"], "1.0"),
            "pre-only": (["0.1a1", "0.2b1"], [], "0.2b1"),
            "all-yanked": (["1.0"], ["1.0"], None),
            "none": ([], [], None),
        }
        with engine.begin() as conn:
            conn.execute(insert(Account.__table__).values(id=1, slug="o", kind="user"))
            for i, (name, (versions, yanked, _)) in enumerate(published.items(), start=1):
                conn.execute(
                    insert(Environment.__table__).values(
                        id=i, owner_id=1, name=name, normalized_name=name
                    )
                )
                for v in versions:
                    conn.execute(
                        insert(Version.__table__).values(
                            environment_id=i,
                            version=v,
                            canonical_version=v,
                            summary="",
                            dependencies=[],
                            yanked=v in yanked,
                            yanked_reason="",
                        )
                    )
        upgrade(engine)
        with engine.connect() as conn:
            got = dict(
                conn.execute(
                    select(Environment.name, Version.version).outerjoin(
                        Version, Version.id == Environment.latest_version_id
                    )
                ).all()
            )
        assert got == {name: want for name, (_, _, want) in published.items()}
    finally:
        engine.dispose()
