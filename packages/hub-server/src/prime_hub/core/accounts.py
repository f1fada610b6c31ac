"""Accounts, organisations, memberships, API tokens and authentication."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session, lazyload

from ..auth import (
    ROLES,
    SCOPES,
    Principal,
    TokenRights,
    check_mint,
    check_revoke,
    hash_token,
    is_expired,
    new_token,
)
from ..db.models import Account, ApiToken, Membership, utcnow
from ..errors import BadRequest, Conflict, Forbidden, NotFound, Unauthorized
from ..names import normalize, validate_project_name, validate_slug
from .context import HubContext


class AccountsService:
    """Accounts, organisations, memberships, API tokens and authentication."""

    def __init__(self, ctx: HubContext) -> None:
        self.ctx = ctx

    def create_user(self, slug: str, email: str | None = None, admin: bool = False) -> Account:
        validate_slug(slug)
        with self.ctx.db.writer.begin() as s:
            if s.scalar(select(Account).where(Account.slug == slug)):
                raise Conflict(f"the name {slug!r} is taken")
            acct = Account(slug=slug, kind="user", email=email, is_admin=admin, display_name=slug)
            s.add(acct)
        return acct

    def create_org(self, slug: str, owner: str) -> Account:
        validate_slug(slug)
        with self.ctx.db.writer.begin() as s:
            if s.scalar(select(Account).where(Account.slug == slug)):
                raise Conflict(f"the name {slug!r} is taken")
            user = self.ctx.account(s, owner, kind="user")
            org = Account(slug=slug, kind="org", display_name=slug, is_admin=False)
            s.add(org)
            s.flush()
            s.add(Membership(org_id=org.id, user_id=user.id, role="owner"))
        return org

    def _check_org_owner(self, by: Principal, org: Account) -> None:
        if by.user is None:
            raise Unauthorized("managing members needs an API token")
        tok = by.token
        if by.role_in(org) != "owner" or tok is None or tok.scope != "publish" or tok.environment:
            raise Forbidden(
                f"only an owner of {org.slug}, with an unrestricted publish token, manages members"
            )

    def set_member(
        self, org: str, user: str, role: str | None, by: Principal | None = None
    ) -> None:
        """Add, change (role) or remove (None) a member; ``by`` None means the admin CLI."""
        if role is not None and role not in ROLES:
            raise BadRequest(f"role must be one of {', '.join(ROLES)}")
        with self.ctx.db.writer.begin() as s:
            o = self.ctx.account(s, org, kind="org")
            if by is not None:
                self._check_org_owner(by, o)
            u = self.ctx.account(s, user, kind="user")
            s.execute(
                delete(Membership).where(Membership.org_id == o.id, Membership.user_id == u.id)
            )
            if role is not None:
                s.add(Membership(org_id=o.id, user_id=u.id, role=role))

    def members(self, principal: Principal, org: str) -> list[tuple[str, str]]:
        with self.ctx.db.reader() as s:
            o = self.ctx.account(s, org, kind="org")
            if principal.role_in(o) is None:
                raise NotFound(f"no org named {org!r}")
            rows = s.execute(
                select(Account.slug, Membership.role)
                .join(Membership, Membership.user_id == Account.id)
                .where(Membership.org_id == o.id)
                .order_by(Account.slug)
            ).all()
        return [(slug, role) for slug, role in rows]

    def mint_token(
        self,
        by: Principal,
        scope: str = "read",
        environment: str | None = None,
        name: str = "",
        expires_in_days: int | None = None,
    ) -> tuple[ApiToken, str]:
        """A token for the caller themself, made by a route on behalf of ``by``: every
        route that creates tokens (JSON API, web form) comes through here, so the rule
        "at most the rights of the token that asks" (``auth.check_mint``) holds on all."""
        if by.user is None:
            raise Unauthorized("creating a token needs an API token (or a signed-in session)")
        rights = _requested_rights(scope, environment, expires_in_days)
        check_mint(by.token, rights)
        assert by.token is not None
        return self._insert_token(by.user.slug, rights, name, minted_by=by.token.id)

    def create_token(
        self,
        user: str,
        scope: str = "publish",
        environment: str | None = None,
        name: str = "",
        expires_in_days: int | None = None,
    ) -> tuple[ApiToken, str]:
        """An administrator's token for ``user`` (the admin CLI): no minting token to
        bound it. HTTP routes use ``mint_token``."""
        return self._insert_token(
            user, _requested_rights(scope, environment, expires_in_days), name
        )

    def _insert_token(
        self, user: str, rights: TokenRights, name: str, minted_by: int | None = None
    ) -> tuple[ApiToken, str]:
        plain = new_token()
        with self.ctx.db.writer.begin() as s:
            u = self.ctx.account(s, user, kind="user")
            if minted_by is not None:
                # locked: a revocation of the minter waits for this commit and then takes
                # the new token with it, or it came first and this mint is refused
                minter = _locked_token(s, minted_by)
                if minter is None or minter.revoked_at is not None:
                    raise Unauthorized("invalid, expired or revoked API token")
            tok = ApiToken(
                minted_by_id=minted_by,
                user_id=u.id,
                name=name,
                token_hash=hash_token(plain),
                scope=rights.scope,
                environment=rights.environment,
                expires_at=rights.expires_at,
            )
            s.add(tok)
        return tok, plain

    def revoke_token(self, token_id: int, by: Principal | None = None) -> list[int]:
        """Revoke a token and every token minted from it, directly or through others (their
        rights came from it, so they go with it); returns the ids revoked now. ``by`` None
        means the admin CLI; every HTTP route passes the caller, whose token must hold at
        least the rights of the one it revokes (``auth.check_revoke``, as for minting)."""
        with self.ctx.db.writer.begin() as s:
            tok = _locked_token(s, token_id)
            if by is not None:
                if by.user is None:
                    raise Unauthorized("revoking a token needs an API token")
                if tok is None or (not by.is_admin and by.user.id != tok.user_id):
                    raise NotFound("no such token")
                check_revoke(by.token, TokenRights.of(tok))
            elif tok is None:
                raise NotFound("no such token")
            now = self.ctx.clock()
            revoked: list[int] = []
            level = [tok]
            while level:
                for t in level:
                    if t.revoked_at is None:
                        t.revoked_at = now
                        revoked.append(t.id)
                s.flush()  # the parents' update first: a concurrent mint from them now waits
                ids = [t.id for t in level]
                level = list(s.scalars(select(ApiToken).where(ApiToken.minted_by_id.in_(ids))))
        return revoked

    def list_tokens(self, user: str) -> list[ApiToken]:
        with self.ctx.db.reader() as s:
            u = self.ctx.account(s, user, kind="user")
            return list(s.scalars(select(ApiToken).where(ApiToken.user_id == u.id)))

    def authenticate(self, plain: str | None) -> Principal:
        if not plain:
            return Principal()
        with self.ctx.db.reader() as s:
            tok = s.scalar(select(ApiToken).where(ApiToken.token_hash == hash_token(plain)))
            if tok is None or tok.revoked_at is not None or is_expired(tok):
                raise Unauthorized("invalid, expired or revoked API token")
            roles = dict(
                s.execute(
                    select(Membership.org_id, Membership.role).where(
                        Membership.user_id == tok.user_id
                    )
                ).all()
            )
            return Principal(user=tok.user, token=tok, memberships=roles)

    def owner_names(self, principal: Principal) -> list[dict[str, Any]]:
        """The user's own namespace and the organisations they belong to."""
        if principal.user is None:
            return []
        with self.ctx.db.reader() as s:
            rows = s.execute(
                select(Account, Membership.role)
                .join(Membership, Membership.org_id == Account.id)
                .where(Membership.user_id == principal.user.id)
            ).all()
        return [
            {"slug": a.slug, "id": a.id, "role": r, "created_at": a.created_at} for a, r in rows
        ]


MAX_TOKEN_DAYS = 3650


def _locked_token(s: Session, token_id: int) -> ApiToken | None:
    """The token row, locked until the transaction ends (PostgreSQL; SQLite serialises
    writers). Without its user: FOR UPDATE cannot apply to the outer join that loads it."""
    q = select(ApiToken).options(lazyload(ApiToken.user)).where(ApiToken.id == token_id)
    return s.scalar(q.with_for_update())


def _requested_rights(
    scope: str, environment: str | None, expires_in_days: int | None
) -> TokenRights:
    if scope not in SCOPES:
        raise BadRequest(f"scope must be one of {', '.join(SCOPES)}")
    env_key = None
    if environment:
        owner_slug, sep, env_name = environment.partition("/")
        if not sep or not owner_slug:
            raise BadRequest("a token's environment is written owner/name")
        env_key = f"{owner_slug}/{normalize(validate_project_name(env_name))}"
    expires_at = None
    if expires_in_days is not None:
        # 0 or a negative number must not slip through as "never expires"
        if not 1 <= expires_in_days <= MAX_TOKEN_DAYS:
            raise BadRequest(f"expiry is a whole number of days from 1 to {MAX_TOKEN_DAYS}")
        expires_at = utcnow() + dt.timedelta(days=expires_in_days)
    return TokenRights(scope, env_key, expires_at)
