"""Listing pages (web and JSON) find each listed environment's latest version in a fixed number
of queries, whatever the page size, with the same "latest" rule as a single environment's page.
"""

from __future__ import annotations

import re

import pytest
from prime_hub_testkit import make_wheel, publish, statements_sent

# The listing pages, with the owner whose environments they list (all public here).
LISTINGS = {
    "owner page": lambda owner: (f"/{owner}", {}),
    "home search": lambda owner: ("/", {"q": owner}),
    "api list": lambda owner: ("/api/v1/environments", {"owner": owner}),
    "cli list": lambda owner: ("/api/v1/environmentshub/", {"owner": owner}),
}


def _publish_envs(server, token: str, owner: str, prefix: str, start: int, stop: int) -> None:
    for i in range(start, stop):
        name = f"{prefix}-{i:02d}"
        for version in ("1.0.0", "1.1.0rc1"):
            r = publish(server, token, owner, name, [make_wheel(name, version)])
            assert r.status_code == 201, r.text


def _statements_for(server, path: str, params: dict[str, str], expect_envs: int) -> int:
    with server.client() as c, statements_sent(server.hub, change_counter=False) as seen:
        r = c.get(path, params=params)
    assert r.status_code == 200, r.text
    # the page really lists every environment with its latest version (1.0.0: rc is not final)
    if r.headers["content-type"].startswith("application/json"):
        body = r.json()
        items = body.get("items", body.get("data"))
        assert [i["latest_version"] for i in items] == ["1.0.0"] * expect_envs
    else:
        assert len(re.findall(r'<span class="muted">1\.0\.0</span>', r.text)) == expect_envs
    return len(seen)


@pytest.mark.parametrize("listing", sorted(LISTINGS))
def test_listing_query_count_does_not_grow_with_environments(server, uid, listing):
    owner, token = server.new_user()
    path, params = LISTINGS[listing](owner)
    _publish_envs(server, token, owner, uid, 0, 2)
    small = _statements_for(server, path, params, 2)
    _publish_envs(server, token, owner, uid, 2, 15)
    large = _statements_for(server, path, params, 15)
    print(f"\n{server.name} {listing}: {small} statements for 2 envs, {large} for 15")
    assert large == small


def test_listings_show_the_same_latest_version_as_the_environment(server, uid):
    """Yanked versions never count; a final beats any pre-release; PEP 440, not text, order;
    only pre-releases: the newest of them; nothing left: no latest version."""
    owner, token = server.new_user()
    published = {
        "mixed": ["1.0.0", "2.0.0", "3.0.0rc1"],  # 2.0.0 yanked below
        "pre": ["0.1.0rc1", "0.2.0b1"],
        "gone": ["1.0.0"],  # yanked below
        "order": ["1.9", "1.10", "1.2"],
    }
    yank = {"mixed": "2.0.0", "gone": "1.0.0"}
    expected = {"mixed": "1.0.0", "pre": "0.2.0b1", "gone": None, "order": "1.10"}
    with server.client(token) as c:
        for suffix, versions in published.items():
            name = f"{uid}-{suffix}"
            for v in versions:
                r = publish(server, token, owner, name, [make_wheel(name, v)])
                assert r.status_code == 201, r.text
            if suffix in yank:
                url = f"/api/v1/environments/{owner}/{name}/versions/{yank[suffix]}/yank"
                assert c.post(url, json={"reason": "bad"}).status_code == 200
        want = {f"{uid}-{s}": v for s, v in expected.items()}

        api = c.get("/api/v1/environments", params={"owner": owner}).json()["items"]
        assert {i["name"]: i["latest_version"] for i in api} == want
        cli = c.get("/api/v1/environmentshub/", params={"owner": owner}).json()["data"]
        assert {i["name"]: i["latest_version"] for i in cli} == want
        # each environment's own page agrees with the listings
        for name, v in want.items():
            single = c.get(f"/api/v1/environments/{owner}/{name}").json()
            assert single["latest_version"] == v

        html = c.get(f"/{owner}").text
    shown = dict(
        re.findall(
            r"<strong>[^<]*/([^<]+)</strong></a>\s*(?:<span class=\"muted\">([^<]*)</span>)?",
            html,
        )
    )
    assert shown == {n: v or "" for n, v in want.items()}


def test_listed_times_are_utc_iso_8601():
    """Issue 30 item 3: a listing formats its times without `replace(tzinfo=...)` per time;
    the text is what an aware UTC time's `isoformat` gives, and an aware time keeps its own
    offset."""
    import datetime as dt

    from prime_hub.views import iso

    times = [dt.datetime(2026, 12, 2, 5, 36), dt.datetime(2026, 12, 2, 5, 36, 0, 123)]
    for t in times:
        assert iso(t) == t.replace(tzinfo=dt.UTC).isoformat()
        assert dt.datetime.fromisoformat(iso(t) or "") == t.replace(tzinfo=dt.UTC)
    plus_two = dt.datetime(2026, 12, 2, 5, 36, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert iso(plus_two) == "2026-12-02T05:36:00+02:00" and iso(None) is None
