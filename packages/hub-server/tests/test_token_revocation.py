"""A token can only revoke tokens with rights at most its own, and a revoked token takes the
tokens minted from it along (issue 26, "Revocation is weaker than minting").

Reproduced before the fix: ``DELETE /api/v1/tokens/{id}`` (and the web form
``/settings/tokens/{id}/revoke``) checked only the user, so a leaked read-only or
single-environment token revoked the user's publish token; tokens minted by a revoked token
kept working. Attacked as a class: both routes (the form through a real session cookie and
CSRF value) x every (revoking token, target token) pair that widens a right, on both
deployments. The same pairs as minting (``auth.check_revoke`` and ``auth.check_mint`` share
one comparison of rights).
"""

from __future__ import annotations

import re

import httpx
import pytest

from prime_hub.errors import Unauthorized

TOKENS = {  # made by the admin path (which no HTTP route reaches)
    "full": {"scope": "publish"},
    "full-2": {"scope": "publish"},
    "read": {"scope": "read"},
    "bound": {"scope": "publish", "environment": "{owner}/bound"},
    "bound-read": {"scope": "read", "environment": "{owner}/bound"},
    "bound-other": {"scope": "read", "environment": "{owner}/other"},
    "bound-read-soon": {"scope": "read", "environment": "{owner}/bound", "expires_in_days": 1},
    "expiring": {"scope": "publish", "expires_in_days": 2},
    "expiring-later": {"scope": "read", "expires_in_days": 30},
}

REFUSED = [  # (revoking token, target): the target has a right the revoker lacks
    ("read", "full"),  # the leaked read-only token of the report
    ("bound", "full"),  # the leaked single-environment token of the report
    ("bound", "read"),  # unbound, even read-only
    ("bound", "bound-other"),
    ("bound-read", "bound"),  # publish
    ("expiring", "full"),  # never expires
    ("expiring", "expiring-later"),
]

ALLOWED = [
    ("full", "full-2"),
    ("full", "bound"),
    ("read", "bound-other"),
    ("bound", "bound-read"),
    ("expiring", "bound-read-soon"),  # narrower, and expires no later
    ("bound-read", "bound-read"),  # itself (`prime logout --revoke`)
]


def _user_with_tokens(server, kinds: set[str]) -> tuple[str, dict[str, tuple[int, str]]]:
    owner, _ = server.new_user("rev")
    out = {}
    for kind in sorted(kinds):
        spec = {
            k: v.format(owner=owner) if isinstance(v, str) else v for k, v in TOKENS[kind].items()
        }
        tok, plain = server.hub.accounts.create_token(owner, **spec)
        out[kind] = (tok.id, plain)
    return owner, out


def _works(server, plain: str) -> bool:
    try:
        server.hub.accounts.authenticate(plain)
    except Unauthorized:
        return False
    return True


def _via_api(server, token: str, target_id: int) -> int:
    with server.client(token) as c:
        return c.delete(f"/api/v1/tokens/{target_id}").status_code


def _via_web_form(server, token: str, target_id: int) -> int:
    """Sign in like a browser, read the CSRF value from the token page, post the revoke form
    the page shows for the target: the exact requests a browser makes."""
    with httpx.Client(base_url=server.url, timeout=30) as c:
        r = c.post("/login", data={"token": token, "next": "/settings/tokens"})
        assert r.status_code == 303 and "prime_hub_token" in c.cookies
        page = c.get("/settings/tokens")
        assert f'action="/settings/tokens/{target_id}/revoke"' in page.text
        csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text).group(1)
        r = c.post(f"/settings/tokens/{target_id}/revoke", data={"csrf": csrf})
        return r.status_code


ROUTES = {"json-api": _via_api, "web-form": _via_web_form}


@pytest.mark.parametrize("route", sorted(ROUTES))
@pytest.mark.parametrize(("revoker", "target"), REFUSED, ids=lambda x: str(x))
def test_no_route_revokes_a_token_with_wider_rights(server, route, revoker, target):
    _, toks = _user_with_tokens(server, {revoker, target})
    assert ROUTES[route](server, toks[revoker][1], toks[target][0]) == 403
    assert _works(server, toks[target][1])  # the wider token is untouched
    assert _works(server, toks[revoker][1])


@pytest.mark.parametrize("route", sorted(ROUTES))
@pytest.mark.parametrize(("revoker", "target"), ALLOWED, ids=lambda x: str(x))
def test_a_token_revokes_tokens_within_its_rights(server, route, revoker, target):
    _, toks = _user_with_tokens(server, {revoker, target})
    code = ROUTES[route](server, toks[revoker][1], toks[target][0])
    assert code == (200 if route == "json-api" else 303)
    assert not _works(server, toks[target][1])
    assert _works(server, toks[revoker][1]) == (revoker != target)


def test_another_users_token_is_not_found(server):
    _, mine = _user_with_tokens(server, {"full"})
    _, theirs = _user_with_tokens(server, {"read"})
    assert _via_api(server, mine["full"][1], theirs["read"][0]) == 404
    assert _works(server, theirs["read"][1])


def _mint(server, token: str, **want) -> tuple[int, str]:
    with server.client(token) as c:
        r = c.post("/api/v1/tokens", json=want)
    assert r.status_code == 201, r.text
    return r.json()["id"], r.json()["token"]


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_tokens_minted_from_a_revoked_token_are_revoked_with_it(server, route):
    """Decided and documented (docs/operations/hub.md): a token's children, and theirs, got
    their rights from it, so they stop working with it; its parent and siblings do not."""
    _, toks = _user_with_tokens(server, {"full"})
    root = toks["full"][1]
    child_id, child = _mint(server, root, scope="publish", name="ci")
    grandchild_id, grandchild = _mint(server, child, scope="read", name="ci-read")
    sibling_id, sibling = _mint(server, root, scope="read", name="laptop")
    code = ROUTES[route](server, root, child_id)
    assert code in (200, 303)
    assert not _works(server, child) and not _works(server, grandchild)
    assert _works(server, root) and _works(server, sibling)
    with server.client(root) as c:  # the listing says so, too
        state = {t["id"]: t["revoked"] for t in c.get("/api/v1/tokens").json()["tokens"]}
    assert state[child_id] and state[grandchild_id] and not state[sibling_id]
    with server.client(grandchild) as c:  # and a child can no longer mint anything
        assert c.post("/api/v1/tokens", json={"scope": "read"}).status_code == 401


def test_the_api_names_every_token_it_revoked(server):
    _, toks = _user_with_tokens(server, {"full"})
    child_id, child = _mint(server, toks["full"][1], scope="read")
    grandchild_id, _ = _mint(server, child, scope="read")
    with server.client(toks["full"][1]) as c:
        r = c.delete(f"/api/v1/tokens/{child_id}")
    assert r.json() == {"revoked": child_id, "revoked_ids": [child_id, grandchild_id]}
