"""API tokens and permission rules.

A token is shown once (``phub_`` + 43 url-safe characters) and stored as its SHA-256. Scope is
``read`` or ``publish`` (publish implies read), for all environments the user can reach or for
one ``owner/name``. Roles in an organisation: ``owner`` and ``publisher`` may publish, yank
and delete; ``reader`` may read private environments.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import secrets
from dataclasses import dataclass, field

from .db.models import Account, ApiToken, Environment
from .errors import Forbidden, Unauthorized
from .names import normalize

TOKEN_PREFIX = "phub_"
SCOPES = ("read", "publish")
SCOPE_RANK = {"read": 0, "publish": 1}  # a higher rank implies every right of a lower one
ROLES = ("owner", "publisher", "reader")
WRITE_ROLES = ("owner", "publisher")


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def token_from_header(value: str | None) -> str | None:
    """Bearer token, or the password of HTTP Basic auth (twine/uv/pip send ``__token__:<tok>``)."""
    if not value:
        return None
    scheme, _, cred = value.partition(" ")
    scheme = scheme.lower()
    if scheme in ("bearer", "token"):
        return cred.strip() or None
    if scheme == "basic":
        try:
            decoded = base64.b64decode(cred.strip(), validate=True).decode()
        except (ValueError, UnicodeDecodeError):
            return None
        user, _, password = decoded.partition(":")
        return password or (user if user.startswith(TOKEN_PREFIX) else None)
    return None


@dataclass
class Principal:
    """Who is calling: a user through a token, or nobody."""

    user: Account | None = None
    token: ApiToken | None = None
    memberships: dict[int, str] = field(default_factory=dict)  # org id -> role

    @property
    def authenticated(self) -> bool:
        return self.user is not None

    @property
    def is_admin(self) -> bool:
        return bool(self.user and self.user.is_admin)

    def require_user(self, refusal: str) -> Account:
        """The calling user; `Unauthorized` with ``refusal`` when no token named one."""
        if self.user is None:
            raise Unauthorized(refusal)
        return self.user

    def _token_allows(self, owner_slug: str, env_name: str | None, write: bool) -> bool:
        if self.token is None:
            return False
        if write and self.token.scope != "publish":
            return False
        if self.token.environment is None:
            return True
        if env_name is None:
            return False
        return self.token.environment == f"{owner_slug}/{normalize(env_name)}"

    def role_in(self, owner: Account) -> str | None:
        return self._role(owner.id)

    def _role(self, owner_id: int) -> str | None:
        if self.user is None:
            return None
        if self.user.id == owner_id or self.user.is_admin:
            return "owner"
        return self.memberships.get(owner_id)

    def can_read(self, env: Environment) -> bool:
        return self.can_read_parts(env.visibility, env.owner_id, env.owner.slug, env.name)

    def can_read_parts(self, visibility: str, owner_id: int, owner_slug: str, name: str) -> bool:
        """``can_read`` from plain column values (the index and download fast paths)."""
        if visibility == "public":
            return True
        if self.user is None or self._role(owner_id) is None:
            return False
        return self._token_allows(owner_slug, name, write=False)

    def can_submit_eval(self, env: Environment) -> bool:
        """Attach evaluation results: read access plus a publish-scoped token that covers it."""
        return self.can_read(env) and self._token_allows(env.owner.slug, env.name, write=True)

    def can_publish_in(self, owner: Account) -> bool:
        """Whether this token could publish some environment of ``owner``: the check made
        before an upload body is read, while the environment's name is still unknown."""
        if self.role_in(owner) not in WRITE_ROLES:
            return False
        if self.token is None or self.token.scope != "publish":
            return False
        bound = self.token.environment
        return bound is None or bound.partition("/")[0] == owner.slug

    def can_publish(self, owner: Account, env_name: str) -> bool:
        if self.role_in(owner) not in WRITE_ROLES:
            return False
        return self._token_allows(owner.slug, env_name, write=True)


def _aware(t: dt.datetime) -> dt.datetime:
    # SQLite hands back naive datetimes; every stored time is UTC
    return t.replace(tzinfo=dt.UTC) if t.tzinfo is None else t


def is_expired(token: ApiToken, now: dt.datetime | None = None) -> bool:
    if token.expires_at is None:
        return False
    return _aware(token.expires_at) <= (now or dt.datetime.now(dt.UTC))


@dataclass(frozen=True)
class TokenRights:
    """What a token lets its holder do: scope, the one environment it is bound to
    (``owner/normalized-name``; None = every environment its user reaches) and when it
    stops working (None = never)."""

    scope: str
    environment: str | None
    expires_at: dt.datetime | None

    @classmethod
    def of(cls, token: ApiToken) -> TokenRights:
        return cls(token.scope, token.environment, token.expires_at)


def _beyond(have: TokenRights, other: TokenRights) -> str | None:
    """The one comparison of token rights: the first right ``other`` has that ``have``
    lacks, in words, or None when ``other`` is within ``have`` (scope, environment, expiry)."""
    if SCOPE_RANK[other.scope] > SCOPE_RANK[have.scope]:
        return f"it has the {have.scope} scope, not {other.scope}"
    if have.environment is not None and other.environment != have.environment:
        return f"it is limited to {have.environment}, not {other.environment or 'all environments'}"
    if have.expires_at is not None and (
        other.expires_at is None or _aware(other.expires_at) > _aware(have.expires_at)
    ):
        later = "never" if other.expires_at is None else "later"
        return f"it expires at {_aware(have.expires_at):%Y-%m-%d %H:%M} UTC, not {later}"
    return None


def check_mint(minter: ApiToken | None, wanted: TokenRights) -> None:
    """The rule every route that creates tokens goes through: a token can only mint
    tokens with rights at most its own. Otherwise a leaked read-only or single-environment
    token could be traded up for a token that publishes everywhere, forever."""
    if minter is None:
        raise Unauthorized("creating a token needs an API token (or a signed-in session)")
    wider = _beyond(TokenRights.of(minter), wanted)
    if wider is not None:
        raise Forbidden(f"this token cannot create a token with more rights than its own ({wider})")


def check_revoke(revoker: ApiToken | None, target: TokenRights) -> None:
    """The same rule for every route that revokes tokens: a token can only revoke tokens
    with rights at most its own (itself and the tokens it could have minted). Otherwise a
    leaked read-only or single-environment token could take away the owner's publish token."""
    if revoker is None:
        raise Unauthorized("revoking a token needs an API token (or a signed-in session)")
    wider = _beyond(TokenRights.of(revoker), target)
    if wider is not None:
        raise Forbidden(f"this token cannot revoke a token with more rights than its own ({wider})")
