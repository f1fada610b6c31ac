"""Artifact stores: a local directory (default) or S3-compatible object storage."""

from __future__ import annotations

from ..settings import Settings
from .base import Storage
from .local import LocalStorage


def make_storage(settings: Settings) -> Storage:
    if settings.storage == "s3":
        from .s3 import S3Storage

        return S3Storage(settings)
    return LocalStorage(settings.resolved_artifact_dir)


__all__ = ["LocalStorage", "Storage", "make_storage"]
