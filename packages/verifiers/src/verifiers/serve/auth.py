"""Who may talk to an env server: the one place that decides it.

A server bound to loopback or IPC needs no authentication (only this machine reaches it). A
server bound to any other address must have a shared secret, or it refuses to start. With a
secret, the socket speaks CurveZMQ (RFC 26): both ends derive their key pairs from the secret,
the handshake authenticates both and encrypts everything after it, and the server's ZAP handler
admits only the client key derived from the same secret. A client without the secret, or with
another one, never completes the handshake, so the server never sees its messages.

The secret comes from `secret=` or from the environment variable `VF_ENV_SERVER_SECRET`, which
the server and an unmodified client (prime-rl's orchestrator builds `ZMQEnvClient(address=...)`)
both read. With the variable set, loopback servers use it too.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import os
from dataclasses import dataclass
from typing import Any

import zmq
from zmq.utils import z85

from verifiers.errors import ConfigError

__all__ = [
    "MIN_SECRET_CHARS",
    "SECRET_VAR",
    "CurveKeys",
    "ServerAuthenticator",
    "curve_keys",
    "describe_handshake_failure",
    "is_loopback",
    "require_auth_beyond_loopback",
    "resolve_secret",
    "secure_client_socket",
]

logger = logging.getLogger("verifiers.serve")

SECRET_VAR = "VF_ENV_SERVER_SECRET"
MIN_SECRET_CHARS = 32  # `python -c "import secrets; print(secrets.token_urlsafe(32))"` gives 43
ZAP_DOMAIN = "vf-env-server"
HANDSHAKE_FAILED = (
    zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
    | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
    | zmq.EVENT_HANDSHAKE_FAILED_AUTH
)


def resolve_secret(secret: str | None = None) -> str | None:
    """`secret`, else `$VF_ENV_SERVER_SECRET`, else None (no authentication). A secret that is
    too short to resist guessing is a `ConfigError`."""
    value = secret if secret is not None else os.environ.get(SECRET_VAR) or None
    if value is None:
        return None
    if len(value) < MIN_SECRET_CHARS:
        source = "secret=" if secret is not None else SECRET_VAR
        raise ConfigError(
            f"the env server secret ({source}) has {len(value)} characters; use at least "
            f"{MIN_SECRET_CHARS}, e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))'"
        )
    if not zmq.has("curve"):  # pragma: no cover - pyzmq's wheels bundle libsodium
        raise ConfigError(
            "an env server secret needs CurveZMQ, which this libzmq lacks (pyzmq built "
            "without libsodium): install pyzmq from its wheels"
        )
    return value


@dataclass(frozen=True)
class CurveKeys:
    """Both ends' key pairs (Z85 text), derived from one secret."""

    server_public: bytes
    server_secret: bytes
    client_public: bytes
    client_secret: bytes


def _key_pair(secret: str, role: bytes) -> tuple[bytes, bytes]:
    # Any 32 bytes are a Curve25519 secret key; HMAC keeps the roles' keys independent.
    raw = hmac.new(secret.encode(), b"verifiers env server curve key: " + role, hashlib.sha256)
    secret_key = z85.encode(raw.digest())
    return zmq.curve_public(secret_key), secret_key


def curve_keys(secret: str) -> CurveKeys:
    server_public, server_secret = _key_pair(secret, b"server")
    client_public, client_secret = _key_pair(secret, b"client")
    return CurveKeys(server_public, server_secret, client_public, client_secret)


def _host(address: str) -> tuple[str, str]:
    transport, _, rest = address.partition("://")
    host = rest.rpartition(":")[0] if ":" in rest else rest
    return transport.lower(), host.strip("[]").lower()


def is_loopback(address: str) -> bool:
    """Whether only this machine can reach a socket bound to `address`: ipc/inproc, or tcp
    on a loopback IP or `localhost`. Wildcards, interface names and other hosts are not."""
    transport, host = _host(address)
    if transport in ("ipc", "inproc"):
        return True
    if transport != "tcp":
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # "*", an interface name or a host name


def require_auth_beyond_loopback(address: str, secret: str | None) -> None:
    """Refuse to serve beyond loopback without a secret (before anything binds)."""
    if secret is None and not is_loopback(address):
        raise ConfigError(
            f"refusing to bind env server to {address}: beyond loopback an env server needs "
            f"authentication. Set {SECRET_VAR} (at least {MIN_SECRET_CHARS} characters) for "
            "the server and its clients, or pass secret=, or bind 127.0.0.1"
        )


class _AllowClientKey:
    def __init__(self, client_public: bytes) -> None:
        self.client_public = client_public

    def callback(self, domain: str, key: bytes) -> bool:
        allowed = hmac.compare_digest(key, self.client_public)
        if not allowed:
            logger.warning("env server refused a client whose key is not the secret's")
        return allowed


class ServerAuthenticator:
    """CurveZMQ on a server socket, with a ZAP handler admitting the secret's client key.
    `stop()` when the socket is closed."""

    def __init__(self, context: zmq.Context[Any], secret: str) -> None:
        from zmq.auth.thread import ThreadAuthenticator

        self.keys = curve_keys(secret)
        # The ZAP handler must live in the socket's libzmq context; a shadow of an asyncio
        # context is a plain one over the same libzmq context, as the handler's thread needs.
        self._shadow: zmq.Context[Any] = zmq.Context.shadow(context.underlying)
        self._zap = ThreadAuthenticator(self._shadow, log=logging.getLogger("verifiers.serve.zap"))
        self._zap.start()
        self._zap.configure_curve_callback(
            ZAP_DOMAIN, credentials_provider=_AllowClientKey(self.keys.client_public)
        )

    def secure(self, sock: zmq.Socket[Any]) -> None:
        """Make `sock` (before it binds) a CURVE server checked by this ZAP handler."""
        sock.curve_server = True
        sock.curve_secretkey = self.keys.server_secret
        sock.curve_publickey = self.keys.server_public
        sock.zap_domain = ZAP_DOMAIN.encode()

    def stop(self) -> None:
        self._zap.stop()


def secure_client_socket(sock: zmq.Socket[Any], secret: str | None) -> None:
    """Make `sock` (before it connects) a CURVE client with the secret's keys; no-op without."""
    if secret is None:
        return
    keys = curve_keys(secret)
    sock.curve_serverkey = keys.server_public
    sock.curve_publickey = keys.client_public
    sock.curve_secretkey = keys.client_secret


def describe_handshake_failure(event: int, secret: str | None) -> str:
    """Why a client's ZMTP handshake failed, in words a user can act on."""
    if secret is None:
        return (
            "the handshake failed: the server requires authentication; set "
            f"{SECRET_VAR} to the server's secret"
        )
    if event == zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL:
        return (
            "the handshake failed: the server does not use authentication, but this client "
            f"has a secret ({SECRET_VAR} or secret=)"
        )
    return "the handshake failed: the server's secret differs from this client's"
