"""Upstream index URLs: the credentials an admin may write into one are the hub's own."""

from __future__ import annotations

from urllib.parse import unquote, urlsplit, urlunsplit


def split_credentials(url: str) -> tuple[str, tuple[str, str] | None]:
    """``http://user:pw@host/simple/`` -> (``http://host/simple/``, (user, pw)).

    The URL without credentials is the only form that may leave the hub (redirects, pages,
    error messages); the credentials go only into the hub's own requests to that host."""
    if not url:
        return url, None
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 literal keeps its brackets
        host = f"[{host}]"
    netloc = host if parts.port is None else f"{host}:{parts.port}"
    clean = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return clean, (unquote(parts.username or ""), unquote(parts.password or ""))
