"""A token can only mint tokens with rights at most its own: scope, environment, expiry.

Attacked as a class: every route that creates tokens (the JSON API and the web form, through
a real session cookie and CSRF value) x every (minting token, requested token) pair that
widens a right, on both deployments. The pairs that stay within the minter's rights must
still work, with the stored token no wider than asked.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from prime_hub.auth import is_expired
from prime_hub.db.models import Account, ApiToken

# the minting tokens, made by the admin path (which no HTTP route reaches)
MINTERS = {
    "full": {"scope": "publish"},
    "read": {"scope": "read"},
    "bound": {"scope": "publish", "environment": "{owner}/bound"},
    "bound-read": {"scope": "read", "environment": "{owner}/bound"},
    "expiring": {"scope": "publish", "expires_in_days": 2},
}

REFUSED = [  # (minter, requested, expected status)
    ("read", {"scope": "publish"}, 403),
    ("read", {"scope": "publish", "environment": "{owner}/bound"}, 403),
    ("bound", {"scope": "publish"}, 403),  # unscoped
    ("bound", {"scope": "read"}, 403),  # unscoped, even read-only
    ("bound", {"scope": "publish", "environment": "{owner}/other"}, 403),
    ("bound", {"scope": "read", "environment": "someone-else/bound"}, 403),
    ("bound-read", {"scope": "publish", "environment": "{owner}/bound"}, 403),
    ("expiring", {"scope": "read"}, 403),  # never expires
    ("expiring", {"scope": "read", "expires_in_days": 30}, 403),
    ("full", {"scope": "read", "expires_in_days": 0}, 400),  # 0 must not mean "never"
    ("full", {"scope": "read", "expires_in_days": -1}, 400),
    ("full", {"scope": "admin"}, 400),
]

ALLOWED = [
    ("full", {"scope": "publish"}),
    ("full", {"scope": "read", "environment": "{owner}/anything"}),
    ("read", {"scope": "read"}),
    ("bound", {"scope": "read", "environment": "{owner}/BOUND"}),  # same env, normalised
    ("bound", {"scope": "publish", "environment": "{owner}/bound", "expires_in_days": 5}),
    ("expiring", {"scope": "publish", "expires_in_days": 1}),
]


def _fill(spec: dict, owner: str) -> dict:
    return {k: v.format(owner=owner) if isinstance(v, str) else v for k, v in spec.items()}


def _minter(server, kind: str) -> tuple[str, str]:
    owner, _ = server.new_user("mint")
    _, token = server.hub.accounts.create_token(owner, **_fill(MINTERS[kind], owner))
    return owner, token


def _token_count(server, owner: str) -> int:
    with server.hub.db.reader() as s:
        return s.scalar(
            select(func.count())
            .select_from(ApiToken)
            .join(Account, Account.id == ApiToken.user_id)
            .where(Account.slug == owner)
        )


def _via_api(server, token: str, want: dict) -> tuple[int, str | None]:
    with server.client(token) as c:
        r = c.post("/api/v1/tokens", json=want)
    return r.status_code, r.json().get("token") if r.status_code == 201 else None


def _via_web_form(server, token: str, want: dict) -> tuple[int, str | None]:
    """Sign in like a browser (the cookie the login sets), read the form's CSRF value, post
    the form: the exact requests the token page makes."""
    with httpx.Client(base_url=server.url, timeout=30) as c:
        r = c.post("/login", data={"token": token, "next": "/settings/tokens"})
        assert r.status_code == 303 and "prime_hub_token" in c.cookies
        page = c.get("/settings/tokens")
        assert page.status_code == 200
        csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text).group(1)
        form = {
            "csrf": csrf,
            "name": "minted",
            "scope": want.get("scope", "read"),
            "environment": want.get("environment", ""),
            "expires_in_days": str(want.get("expires_in_days", "")),
        }
        r = c.post("/settings/tokens", data=form)
    found = re.search(r'<pre id="new-token">(phub_[^<]+)</pre>', r.text)
    return r.status_code, found.group(1) if found else None


ROUTES = {"json-api": _via_api, "web-form": _via_web_form}


@pytest.mark.parametrize("route", sorted(ROUTES))
@pytest.mark.parametrize(("minter", "want", "status"), REFUSED, ids=lambda x: str(x))
def test_no_route_mints_wider_rights(server, route, minter, want, status):
    owner, token = _minter(server, minter)
    before = _token_count(server, owner)
    code, plain = ROUTES[route](server, token, _fill(want, owner))
    assert code == status
    assert plain is None
    assert _token_count(server, owner) == before  # nothing was created


@pytest.mark.parametrize("route", sorted(ROUTES))
@pytest.mark.parametrize(("minter", "want"), ALLOWED, ids=lambda x: str(x))
def test_narrower_or_equal_rights_are_minted(server, route, minter, want):
    owner, token = _minter(server, minter)
    code, plain = ROUTES[route](server, token, _fill(want, owner))
    assert code == 201 and plain
    parent = server.hub.accounts.authenticate(token).token
    child = server.hub.accounts.authenticate(plain).token
    assert child.user_id == parent.user_id  # always for the caller themself
    assert child.scope == want["scope"]
    asked = _fill(want, owner).get("environment")
    assert child.environment == (asked.lower() if asked else None)
    if parent.expires_at is not None:
        assert child.expires_at is not None
        limit = parent.expires_at.replace(tzinfo=dt.UTC)
        assert child.expires_at.replace(tzinfo=dt.UTC) <= limit
        assert not is_expired(child)


def test_every_token_creating_route_goes_through_mint_token():
    """The admin-only ``Hub.create_token`` is reached from no HTTP route: a new route that
    creates tokens must use ``mint_token`` (and so the rule) or this fails."""
    routes = Path(__file__).parents[1] / "src" / "prime_hub" / "routes"
    offenders = [p.name for p in routes.glob("*.py") if ".create_token(" in p.read_text()]
    assert offenders == []
    users = [p.name for p in routes.glob("*.py") if ".mint_token(" in p.read_text()]
    assert sorted(users) == ["api.py", "web.py"]
