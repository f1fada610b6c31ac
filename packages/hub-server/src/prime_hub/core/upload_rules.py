"""The rules an upload must satisfy, as pure functions: no database, no store, no I/O.

The services gather the facts (the files of the version already published, the file names
the owner used before) and ask these; each rule raises the hub's error for the client, or
returns what to do. Tested in-process (tests/test_upload_rules.py).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence

from packaging.version import Version as PkgVersion

from ..errors import BadRequest, Conflict, InvalidPackage
from ..names import normalize
from ..validation import ArtifactInfo, parse_version

MAX_TAGS = 20
MAX_TAG_LENGTH = 50


def clean_tags(tags: Iterable[str]) -> list[str]:
    """Tags as stored: stripped, lower-case, non-empty, at most 50 characters, no repeats,
    at most 20 (the first ones given)."""
    out: list[str] = []
    for t in tags:
        t = t.strip().lower()
        if t and len(t) <= MAX_TAG_LENGTH and t not in out:
            out.append(t)
    return out[:MAX_TAGS]


def uploaded_filename(raw: str) -> str:
    """A form upload's file name without any directory a client put in it."""
    filename = raw.replace("\\", "/").rsplit("/", 1)[-1]
    if not filename:
        raise BadRequest("an uploaded file has no file name")
    return filename


def check_declared(
    first: ArtifactInfo,
    name: str | None,
    declared_version: str | None,
    sha256_digest: str | None,
) -> None:
    """What an upload form says of its file (name, version, digest) matches the file."""
    if name and normalize(first.name or "") != normalize(name):
        raise InvalidPackage(
            f"{first.filename} is the distribution {first.name!r}, but the upload says {name!r}"
        )
    if declared_version is not None and parse_version(declared_version) != parse_version(
        first.version or ""
    ):
        raise InvalidPackage(
            f"{first.filename} is version {first.version}, but the upload says {declared_version}"
        )
    if sha256_digest and sha256_digest.lower() != first.sha256:
        raise InvalidPackage(
            f"{first.filename}: sha256 {first.sha256} does not match the declared {sha256_digest}"
        )


def version_of_upload(name: str, artifacts: Sequence[ArtifactInfo]) -> PkgVersion:
    """The one version a set of files publishes: every wheel and sdist is a distribution of
    ``name`` at the same version, no file name twice, at least one wheel or sdist."""
    if not artifacts:
        raise BadRequest("nothing to publish: send a wheel and/or an sdist")
    versions = set()
    for info in artifacts:
        if info.kind in ("wheel", "sdist"):
            if normalize(info.name or "") != normalize(name):
                raise InvalidPackage(
                    f"{info.filename} is the distribution {info.name!r}, "
                    f"not the environment {name!r}"
                )
            versions.add(parse_version(info.version or ""))
    if len(versions) > 1:
        raise InvalidPackage("all files of one upload must carry the same version")
    names = [i.filename for i in artifacts]
    if len(set(names)) != len(names):
        raise BadRequest("the same file name was sent twice")
    if not versions:
        raise BadRequest("an upload needs a wheel or an sdist")
    return versions.pop()


def files_to_add(
    artifacts: Sequence[ArtifactInfo],
    *,
    published: Mapping[str, str],
    has_sdist: bool,
    used_names: Collection[str],
    env_name: str,
    version: PkgVersion,
) -> list[str]:
    """Which of ``artifacts`` a publish adds to the version, given its files already
    ``published`` (file name -> sha256; empty for a new version), whether one of them is an
    sdist, and the file names the owner ``used_names`` before (deleted files: never reused).
    A file already there with the same bytes is skipped (a retried upload); different bytes
    under a published name, a reused name or a second sdist are refused."""
    added: list[str] = []
    for info in artifacts:
        old_sha = published.get(info.filename)
        if old_sha is not None:
            if old_sha != info.sha256:
                raise Conflict(
                    f"{info.filename} already exists with different content "
                    f"(sha256 {old_sha[:12]}…); published files are immutable: bump the version"
                )
            continue
        if info.filename in used_names:
            raise Conflict(
                f"{info.filename} was published before and deleted; a file name "
                "is never reused: bump the version"
            )
        if info.kind == "sdist" and has_sdist:
            raise Conflict(f"{env_name} {version} already has a source distribution")
        added.append(info.filename)
    return added


def primary_artifact(artifacts: Sequence[ArtifactInfo]) -> ArtifactInfo:
    """The file whose metadata describes the version: a wheel, else the sdist, else the
    first file."""
    return next((i for i in artifacts if i.kind == "wheel"), None) or next(
        (i for i in artifacts if i.kind == "sdist"), artifacts[0]
    )


def check_staged_file(filename: str, size: int | None, max_bytes: int) -> None:
    """A file announced for a direct upload: within the size limit, a plain file name."""
    if size is not None and size > max_bytes:
        raise BadRequest(f"{filename} is larger than the limit {max_bytes}")
    if "/" in filename or "\\" in filename or filename.startswith("."):
        raise InvalidPackage(f"invalid file name {filename!r}")
