"""One error hierarchy. The entry point prints ``error: <message>`` and exits with ``exit_code``."""

from __future__ import annotations


class PrimeError(Exception):
    """Anything the user can act on: printed as one line, never as a traceback."""

    exit_code = 1

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UsageError(PrimeError):
    """The command line itself is wrong (a malformed reference, a bad option value)."""

    exit_code = 2


class ConfigError(PrimeError):
    """No hub URL, no token where one is needed, an unreadable config file."""


class HubUnreachable(PrimeError):
    """No network route to the hub (refused, DNS, timeout)."""


class HubError(PrimeError):
    """The hub answered with an error status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class NotFound(HubError):
    pass


class AuthError(HubError):
    """401/403: a wrong, expired or revoked token, or one without the rights needed."""


class PackageError(PrimeError):
    """A local environment package is invalid or could not be built."""


class InstallError(PrimeError):
    """Downloading, verifying or installing an environment failed."""
