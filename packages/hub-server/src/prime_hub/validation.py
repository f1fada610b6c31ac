"""Validation of uploaded archives: safe, complete, and agreeing with the declared name/version.

Everything here works on a file already on local disk (the upload was spooled there), and
raises :class:`InvalidPackage` with a message meant for the person who ran the upload.
"""

from __future__ import annotations

import hashlib
import tarfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from packaging.metadata import parse_email
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from .errors import InvalidPackage

MAX_MEMBERS = 20_000


@dataclass
class ArtifactInfo:
    kind: str  # wheel | sdist | source
    filename: str
    sha256: str
    size: int
    name: str | None = None
    version: str | None = None
    core_metadata: bytes | None = None
    requires_python: str | None = None
    requires_dist: list[str] = field(default_factory=list)
    summary: str = ""
    description: str = ""
    description_content_type: str = ""
    keywords: list[str] = field(default_factory=list)


def file_sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def parse_version(value: str) -> Version:
    try:
        return Version(value)
    except InvalidVersion as exc:
        raise InvalidPackage(f"{value!r} is not a valid PEP 440 version") from exc


def _check_member_name(name: str, archive: str) -> None:
    if not name or "\x00" in name or "\\" in name:
        raise InvalidPackage(f"{archive}: invalid member name {name!r}")
    p = PurePosixPath(name)
    if p.is_absolute() or ".." in p.parts or (len(name) > 1 and name[1] == ":"):
        raise InvalidPackage(f"{archive}: member {name!r} escapes the archive (path traversal)")


def _metadata_fields(raw_bytes: bytes, where: str) -> dict[str, Any]:
    try:
        raw, _unparsed = parse_email(raw_bytes)
    except Exception as exc:  # the parser raises a variety of errors on garbage
        raise InvalidPackage(f"{where} is not valid core metadata: {exc}") from exc
    if not raw.get("name") or not raw.get("version"):
        raise InvalidPackage(f"{where} lacks Name or Version")
    return dict(raw)


def _agree(meta: dict[str, Any], name: str, version: Version, where: str) -> None:
    if canonicalize_name(meta["name"]) != canonicalize_name(name):
        raise InvalidPackage(f"{where} says Name: {meta['name']}, but the file name says {name}")
    if parse_version(meta["version"]) != version:
        raise InvalidPackage(
            f"{where} says Version: {meta['version']}, but the file name says {version}"
        )


def _fill(info: ArtifactInfo, meta: dict[str, Any]) -> None:
    info.name = meta["name"]
    info.version = meta["version"]
    info.requires_python = meta.get("requires_python")
    info.requires_dist = list(meta.get("requires_dist") or [])
    info.summary = meta.get("summary") or ""
    info.description = meta.get("description") or ""
    info.description_content_type = meta.get("description_content_type") or ""
    info.keywords = list(meta.get("keywords") or [])


def validate_wheel(path: Path, filename: str, max_uncompressed: int) -> ArtifactInfo:
    try:
        name, version, _build, _tags = parse_wheel_filename(filename)
    except (InvalidWheelFilename, InvalidVersion) as exc:
        raise InvalidPackage(f"invalid wheel file name {filename!r}: {exc}") from exc
    size = path.stat().st_size
    info = ArtifactInfo("wheel", filename, file_sha256(path), size)
    if not zipfile.is_zipfile(path):
        raise InvalidPackage(f"{filename} is not a zip archive (or it is truncated)")
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
            if len(infos) > MAX_MEMBERS:
                raise InvalidPackage(f"{filename}: too many members ({len(infos)})")
            total = 0
            for zi in infos:
                _check_member_name(zi.filename, filename)
                total += zi.file_size
            if total > max_uncompressed:
                raise InvalidPackage(
                    f"{filename}: uncompressed size {total} exceeds the limit {max_uncompressed}"
                )
            bad = zf.testzip()
            if bad is not None:
                raise InvalidPackage(f"{filename}: member {bad} is corrupt (CRC mismatch)")
            metas = [
                n for n in zf.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")
            ]
            if len(metas) != 1:
                raise InvalidPackage(
                    f"{filename}: expected one *.dist-info/METADATA, found {len(metas)}"
                )
            if metas[0].rsplit("/", 1)[0] + "/WHEEL" not in zf.namelist():
                raise InvalidPackage(f"{filename}: *.dist-info/WHEEL is missing")
            raw = zf.read(metas[0])
    except InvalidPackage:
        raise
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError) as exc:
        raise InvalidPackage(f"{filename} is not a readable zip archive: {exc}") from exc
    meta = _metadata_fields(raw, f"{filename}: METADATA")
    _agree(meta, name, version, f"{filename}: METADATA")
    _fill(info, meta)
    info.core_metadata = raw
    return info


def _scan_tar(
    path: Path, filename: str, max_uncompressed: int
) -> tuple[dict[str, bytes], set[str]]:
    """Read the whole archive (detects truncation); return small top-level PKG-INFO files."""
    found: dict[str, bytes] = {}
    tops: set[str] = set()
    total = 0
    count = 0
    try:
        with tarfile.open(path, "r:gz") as tf:
            for member in tf:
                count += 1
                if count > MAX_MEMBERS:
                    raise InvalidPackage(f"{filename}: too many members")
                _check_member_name(member.name, filename)
                if member.issym() or member.islnk():
                    target = PurePosixPath(member.name).parent / member.linkname
                    _check_member_name(member.linkname, filename)
                    if member.linkname.startswith("/") or ".." in target.parts:
                        raise InvalidPackage(f"{filename}: link {member.name} escapes the archive")
                elif not (member.isfile() or member.isdir()):
                    raise InvalidPackage(f"{filename}: unsupported member type for {member.name}")
                total += member.size
                if total > max_uncompressed:
                    raise InvalidPackage(
                        f"{filename}: uncompressed size exceeds the limit {max_uncompressed}"
                    )
                tops.add(PurePosixPath(member.name).parts[0])
                fh = tf.extractfile(member) if member.isfile() else None
                if fh is not None:
                    data = fh.read()  # reading every member proves the archive is complete
                    parts = PurePosixPath(member.name).parts
                    if len(parts) == 2 and parts[1] == "PKG-INFO":
                        found[member.name] = data
    except InvalidPackage:
        raise
    except (tarfile.TarError, OSError, EOFError, ValueError) as exc:
        raise InvalidPackage(f"{filename} is not a readable .tar.gz archive: {exc}") from exc
    if count == 0:
        raise InvalidPackage(f"{filename} is an empty archive")
    return found, tops


def validate_sdist(path: Path, filename: str, max_uncompressed: int) -> ArtifactInfo:
    if not filename.endswith(".tar.gz"):
        raise InvalidPackage(f"{filename}: source distributions must be .tar.gz (PEP 625)")
    try:
        name, version = parse_sdist_filename(filename)
    except (InvalidSdistFilename, InvalidVersion) as exc:
        raise InvalidPackage(f"invalid sdist file name {filename!r}: {exc}") from exc
    info = ArtifactInfo("sdist", filename, file_sha256(path), path.stat().st_size)
    found, tops = _scan_tar(path, filename, max_uncompressed)
    if len(tops) != 1:
        raise InvalidPackage(f"{filename}: an sdist has exactly one top-level directory")
    top = next(iter(tops))
    raw = found.get(f"{top}/PKG-INFO")
    if raw is None:
        raise InvalidPackage(f"{filename}: {top}/PKG-INFO is missing")
    meta = _metadata_fields(raw, f"{filename}: PKG-INFO")
    _agree(meta, name, version, f"{filename}: PKG-INFO")
    _fill(info, meta)
    return info


def validate_source_archive(path: Path, filename: str, max_uncompressed: int) -> ArtifactInfo:
    """A plain source tree tarball (what the prime CLI pushes): safe and complete."""
    if not filename.endswith(".tar.gz"):
        raise InvalidPackage(f"{filename}: source archives must be .tar.gz")
    info = ArtifactInfo("source", filename, file_sha256(path), path.stat().st_size)
    _scan_tar(path, filename, max_uncompressed)
    return info


def validate_artifact(path: Path, filename: str, max_uncompressed: int) -> ArtifactInfo:
    if "/" in filename or "\\" in filename or filename.startswith("."):
        raise InvalidPackage(f"invalid file name {filename!r}")
    if filename.endswith(".whl"):
        return validate_wheel(path, filename, max_uncompressed)
    if filename.endswith((".tar.gz", ".zip", ".tar.bz2", ".tgz")):
        return validate_sdist(path, filename, max_uncompressed)
    raise InvalidPackage(f"{filename}: only wheels (.whl) and sdists (.tar.gz) are accepted")
