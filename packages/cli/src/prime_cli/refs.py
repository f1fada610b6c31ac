"""`owner/name[@version]` references."""

from __future__ import annotations

import re
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from .errors import UsageError

_SLUG = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")


def normalize(name: str) -> str:
    """PEP 503 normalised project name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def module_name(name: str) -> str:
    return re.sub(r"[-.]+", "_", name).lower()


@dataclass(frozen=True)
class EnvRef:
    owner: str
    name: str
    version: str | None = None

    @property
    def slug(self) -> str:
        return f"{self.owner}/{self.name}"

    def __str__(self) -> str:
        return self.slug + (f"@{self.version}" if self.version else "")


def parse_ref(text: str, *, allow_version: bool = True, default_owner: str | None = None) -> EnvRef:
    """Parse ``owner/name[@version]``; ``name`` alone takes ``default_owner`` when given."""
    raw = text.strip()
    body, sep, version = raw.partition("@")
    if sep and not allow_version:
        raise UsageError(f"{raw!r}: this command takes owner/name without @version")
    if sep and not version:
        raise UsageError(f"{raw!r}: nothing after '@' (expected owner/name@version)")
    if "/" in body:
        owner, _, name = body.partition("/")
    elif default_owner:
        owner, name = default_owner, body
    else:
        raise UsageError(f"{raw!r} is not an environment reference: expected owner/name[@version]")
    for part, what in ((owner, "owner"), (name, "name")):
        if not _SLUG.match(part):
            raise UsageError(f"{raw!r}: {what} {part!r} is not a valid name")
    if version:
        try:
            Version(version)
        except InvalidVersion:
            raise UsageError(f"{raw!r}: {version!r} is not a valid version") from None
    return EnvRef(owner, name, version or None)
