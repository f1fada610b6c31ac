"""Browser sign-in: the API token in an HttpOnly cookie, and a CSRF value for every form.

Only the web pages read the cookie; the JSON API keeps requiring an explicit token, so a cookie
can never be replayed against it by another site.
"""

from __future__ import annotations

import hashlib
import hmac

from fastapi import Request
from fastapi.responses import Response

from ..auth import Principal, token_from_header
from ..deps import hub_of
from ..errors import Forbidden, Unauthorized

COOKIE = "prime_hub_token"
MAX_AGE = 30 * 24 * 3600


def cookie_token(request: Request) -> str | None:
    return request.cookies.get(COOKIE) or None


def web_principal(request: Request) -> Principal:
    """The signed-in user (cookie), else whoever an Authorization header names (scripts)."""
    token = cookie_token(request) or token_from_header(request.headers.get("authorization"))
    return authenticate_or_anonymous(request, token)


def authenticate_or_anonymous(request: Request, token: str | None) -> Principal:
    """A revoked or expired token browses as nobody instead of locking every page."""
    try:
        return hub_of(request).accounts.authenticate(token)
    except Unauthorized:
        return Principal()


def sign_in(request: Request, response: Response, token: str) -> None:
    response.set_cookie(
        COOKIE,
        token,
        max_age=MAX_AGE,
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
        path="/",
    )


def sign_out(response: Response) -> None:
    response.delete_cookie(COOKIE, path="/")


def csrf_value(request: Request) -> str:
    """Bound to the signed-in token: a form from another site cannot know it."""
    return csrf_for(cookie_token(request) or "")


def csrf_for(session_token: str) -> str:
    """`csrf_value` of a session's token ("" without a session)."""
    return hmac.new(session_token.encode(), b"prime-hub-csrf", hashlib.sha256).hexdigest()[:32]


def check_csrf(request: Request, submitted: str | None) -> None:
    if not submitted or not hmac.compare_digest(submitted, csrf_value(request)):
        raise Forbidden("the form expired or came from another site; reload the page and retry")
