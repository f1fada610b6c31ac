"""One error hierarchy; every HubError becomes a JSON ``{"detail": ...}`` response."""

from __future__ import annotations


class HubError(Exception):
    status_code = 500

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class BadRequest(HubError):
    status_code = 400


class InvalidPackage(BadRequest):
    """An uploaded archive is malformed, unsafe or contradicts the request."""


class Unauthorized(HubError):
    status_code = 401


class Forbidden(HubError):
    status_code = 403


class NotFound(HubError):
    status_code = 404


class Conflict(HubError):
    status_code = 409


class Gone(HubError):
    status_code = 410


class TooLarge(HubError):
    status_code = 413


class UpstreamUnavailable(HubError):
    """The upstream index did not answer the hub's name check; nothing was registered."""

    status_code = 503


class StorageError(HubError):
    """The artifact store failed; nothing was published."""

    status_code = 503
