"""Artifacts in a local directory.

A write goes to a temp name under ``<root>/.partial/`` (the same file system as its
destination, so the final ``os.replace`` is atomic) and only then gets its key: a reader never
sees half a file, and what a killed process leaves behind is all in one place, where
``remove_partials`` (run by ``prime-hub admin gc``) finds it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ..errors import NotFound, StorageError
from .base import Storage

PARTIAL = ".partial"
LEGACY_TMP = ".tmp-"  # where writes went before .partial/ (next to their destination)


class LocalStorage(Storage):
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.partial_dir = self.root / PARTIAL

    def _path(self, key: str) -> Path:
        parts = key.split("/")
        if any(p in ("", ".", "..") for p in parts):
            raise StorageError(f"invalid storage key {key!r}")
        return self.root.joinpath(*parts)

    def put_file(self, key: str, path: Path) -> None:
        dest = self._path(key)
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            self.partial_dir.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.partial_dir, prefix="w-")
            try:
                with os.fdopen(fd, "wb") as out, open(path, "rb") as src:
                    shutil.copyfileobj(src, out, 1024 * 1024)
                    out.flush()
                    os.fsync(out.fileno())
                os.replace(tmp, dest)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            raise StorageError(f"artifact store failed: {exc}") from exc

    def exists(self, key: str) -> bool:
        return self._path(key).is_file()

    def size(self, key: str) -> int | None:
        try:
            return self._path(key).stat().st_size
        except OSError:
            return None

    def fetch_to_file(self, key: str, path: Path) -> None:
        try:
            shutil.copyfile(self._path(key), path)
        except FileNotFoundError as exc:
            raise NotFound(f"artifact {key} is missing from the store") from exc
        except OSError as exc:
            raise StorageError(f"artifact store failed: {exc}") from exc

    def iter_bytes(self, key: str, chunk_size: int = 256 * 1024) -> Iterator[bytes]:
        try:
            fh = open(self._path(key), "rb")
        except FileNotFoundError as exc:
            raise NotFound(f"artifact {key} is missing from the store") from exc
        except OSError as exc:
            raise StorageError(f"artifact store failed: {exc}") from exc

        def gen() -> Iterator[bytes]:
            with fh:
                while chunk := fh.read(chunk_size):
                    yield chunk

        return gen()

    def delete(self, key: str) -> None:
        try:
            self._path(key).unlink(missing_ok=True)
        except OSError as exc:
            raise StorageError(f"artifact store failed: {exc}") from exc

    def list_keys(self, prefix: str) -> Iterator[tuple[str, float]]:
        base = self._path(prefix.rstrip("/"))
        if not base.is_dir():
            return
        for path in base.rglob("*"):
            if path.is_file() and not path.name.startswith(LEGACY_TMP):
                yield path.relative_to(self.root).as_posix(), path.stat().st_mtime

    def remove_partials(self, older_than: float) -> list[str]:
        removed = []
        candidates = list(self.partial_dir.glob("*")) if self.partial_dir.is_dir() else []
        if (self.root / "blobs").is_dir():
            candidates += self.root.joinpath("blobs").rglob(LEGACY_TMP + "*")
        for path in candidates:
            try:
                if path.is_file() and path.stat().st_mtime < older_than:
                    path.unlink()
                    removed.append(path.relative_to(self.root).as_posix())
            except FileNotFoundError:  # finished (renamed) or removed meanwhile
                continue
        return removed

    def local_path(self, key: str) -> Path:
        return self._path(key)
