"""Security headers as ASGI middleware: the viewer's app and the hub's pages both use it."""

from __future__ import annotations

from collections.abc import Sequence

from starlette.types import ASGIApp, Message, Receive, Scope, Send

Headers = Sequence[tuple[bytes, bytes]]


def security_headers(csp: str, referrer_policy: str) -> list[tuple[bytes, bytes]]:
    """A Content-Security-Policy, no MIME sniffing, and a referrer policy."""
    return [
        (b"content-security-policy", csp.encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", referrer_policy.encode()),
    ]


class SecurityHeaders:
    """Adds ``headers`` to each HTTP response (errors included) that does not set them
    itself; with ``html_only``, to ``text/html`` responses only."""

    def __init__(self, app: ASGIApp, headers: Headers, html_only: bool = False) -> None:
        self.app = app
        self.headers = list(headers)
        self.html_only = html_only

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                own = list(message.get("headers", []))
                if not self.html_only or _content_type(own).startswith(b"text/html"):
                    names = {name.lower() for name, _ in own}
                    own += [(n, v) for n, v in self.headers if n not in names]
                    message = {**message, "headers": own}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _content_type(headers: Headers) -> bytes:
    return next((v for n, v in headers if n.lower() == b"content-type"), b"")
