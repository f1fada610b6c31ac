"""The storage interface the server uses. Keys are '/'-separated relative paths."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from pathlib import Path


def blob_key(sha256: str, filename: str) -> str:
    """Content-addressed key: identical bytes share a key, so retries overwrite nothing else."""
    return f"blobs/{sha256[:2]}/{sha256}/{filename}"


class Storage(ABC):
    @abstractmethod
    def put_file(self, key: str, path: Path) -> None:
        """Store the file at ``path`` under ``key`` (atomically: all or nothing)."""

    @abstractmethod
    def exists(self, key: str) -> bool: ...

    @abstractmethod
    def size(self, key: str) -> int | None:
        """Size in bytes, or None when absent."""

    @abstractmethod
    def fetch_to_file(self, key: str, path: Path) -> None: ...

    @abstractmethod
    def iter_bytes(self, key: str, chunk_size: int = 256 * 1024) -> Iterator[bytes]: ...

    @abstractmethod
    def delete(self, key: str) -> None: ...

    @abstractmethod
    def list_keys(self, prefix: str) -> Iterator[tuple[str, float]]:
        """(key, last-modified unix time) of every object under ``prefix``."""

    @abstractmethod
    def remove_partials(self, older_than: float) -> list[str]:
        """Remove the remains of writes that never finished (a process killed mid-write)
        and were last touched before unix time ``older_than``; what was removed."""

    def presigned_get(self, key: str, filename: str) -> str | None:
        """A URL the client can download from directly, or None to stream through us."""
        return None

    def presigned_put(self, key: str) -> str | None:
        """A URL the client can PUT the bytes to directly, or None to PUT through us."""
        return None
