"""A version's source archive, read for the file browser (never extracted to disk)."""

from __future__ import annotations

import io
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import PurePosixPath

from ..db.models import File, Version
from ..errors import NotFound
from ..storage import Storage

MAX_ARCHIVE_BYTES = 64 * 1024 * 1024
MAX_SHOWN_BYTES = 512 * 1024


@dataclass(frozen=True)
class Entry:
    path: str  # relative to the archive's top folder
    size: int


def source_file(version: Version) -> File:
    """The sdist (or plain source archive); the wheel when that is all there is."""
    by_kind = {f.kind: f for f in version.files}
    found = by_kind.get("sdist") or by_kind.get("source") or by_kind.get("wheel")
    if found is None:
        raise NotFound(f"version {version.version} has no files")
    return found


def _read(storage: Storage, f: File) -> bytes:
    if f.size > MAX_ARCHIVE_BYTES:
        raise NotFound(f"{f.filename} is too large to browse here; download it instead")
    return b"".join(storage.iter_bytes(f.storage_key))


def _strip_top(names: list[str]) -> tuple[str, list[str]]:
    """Drop a common top folder (``name-1.0/``) that every sdist has."""
    tops = {n.split("/", 1)[0] for n in names}
    if len(tops) == 1 and all("/" in n for n in names):
        top = tops.pop() + "/"
        return top, [n[len(top) :] for n in names]
    return "", names


class Archive:
    """Regular files of an archive: listing and reading by relative path."""

    def __init__(self, data: bytes, filename: str) -> None:
        self._data = data
        self._zip = filename.endswith(".whl") or filename.endswith(".zip")
        members = self._members()
        self._top, rel = _strip_top([name for name, _ in members])
        self.entries = sorted(
            (Entry(r, size) for r, (_, size) in zip(rel, members, strict=True) if r),
            key=lambda e: e.path,
        )

    def _members(self) -> list[tuple[str, int]]:
        if self._zip:
            with zipfile.ZipFile(io.BytesIO(self._data)) as z:
                return [(i.filename, i.file_size) for i in z.infolist() if not i.is_dir()]
        with tarfile.open(fileobj=io.BytesIO(self._data), mode="r:*") as t:
            return [(m.name, m.size) for m in t.getmembers() if m.isfile()]

    def read(self, rel: str) -> bytes:
        norm = str(PurePosixPath(rel))
        if norm.startswith(("/", "..")) or not any(e.path == norm for e in self.entries):
            raise NotFound(f"no file {rel} in this version")
        name = self._top + norm
        if self._zip:
            with zipfile.ZipFile(io.BytesIO(self._data)) as z:
                return z.read(name)[: MAX_SHOWN_BYTES + 1]
        with tarfile.open(fileobj=io.BytesIO(self._data), mode="r:*") as t:
            fh = t.extractfile(name)
            if fh is None:
                raise NotFound(f"{rel} is not a regular file")
            return fh.read(MAX_SHOWN_BYTES + 1)


def open_archive(storage: Storage, f: File) -> Archive:
    return Archive(_read(storage, f), f.filename)


def as_text(data: bytes) -> str | None:
    """The file as text when it looks like text, else None (binary files are not shown)."""
    if b"\x00" in data[:8192]:
        return None
    try:
        return data[:MAX_SHOWN_BYTES].decode("utf-8")
    except UnicodeDecodeError:
        return None
