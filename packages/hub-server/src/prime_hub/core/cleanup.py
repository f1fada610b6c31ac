"""Garbage collection: what crashed, killed or abandoned uploads leave behind.

Three kinds of leftovers, all removed once older than a grace period (younger ones may
belong to an upload still under way): stored objects no file row references (a crash
between storing and committing; deleted versions), unfinished store writes (local
``.partial/`` files, S3 multipart uploads), and upload spool directories under the data dir.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from pathlib import Path

from sqlalchemy import select

from ..db.models import EvalResult, File, PendingUpload
from ..uploads import SPOOL
from .context import HubContext
from .staging import StagingService

# spool areas under the data dir: ``spool`` (uploads.SpoolDir) and ``tmp`` (deps.WorkDir)
SPOOL_AREAS = (SPOOL, "tmp")


def _newest_mtime(path: Path) -> float:
    """The last time anything under ``path`` was written (a live upload keeps writing)."""
    newest = path.lstat().st_mtime
    if path.is_dir() and not path.is_symlink():
        for root, dirs, files in os.walk(path):
            for name in dirs + files:
                try:
                    newest = max(newest, os.lstat(os.path.join(root, name)).st_mtime)
                except FileNotFoundError:
                    continue
    return newest


class CleanupService:
    """Garbage collection of what failed or abandoned uploads leave behind."""

    def __init__(self, ctx: HubContext, staging: StagingService) -> None:
        self.ctx = ctx
        self.staging = staging

    def collect_garbage(self, grace: dt.timedelta = dt.timedelta(hours=1)) -> list[str]:
        """Delete every leftover older than ``grace``; what was removed."""
        self.staging.expire_pending()
        cutoff = (self.ctx.clock() - grace).timestamp()
        with self.ctx.db.reader() as s:
            referenced = set(s.scalars(select(File.storage_key)))
            staged = set(s.scalars(select(PendingUpload.staging_key)))
            # rollouts of evaluations deleted with their version or environment
            rollouts = set(s.scalars(select(EvalResult.rollouts_key)))
        removed = []
        for prefix, keep in (
            ("blobs/", referenced),
            ("staging/", staged),
            ("rollouts/", rollouts),
        ):
            for key, modified in list(self.ctx.storage.list_keys(prefix)):
                if key not in keep and modified < cutoff:
                    self.ctx.storage.delete(key)
                    removed.append(key)
        removed += self.ctx.storage.remove_partials(cutoff)
        removed += self.remove_stale_spool(cutoff)
        return removed

    def remove_stale_spool(self, older_than: float) -> list[str]:
        removed = []
        for area in SPOOL_AREAS:
            root = self.ctx.settings.data_dir / area
            if not root.is_dir():
                continue
            for entry in root.iterdir():
                try:
                    if _newest_mtime(entry) >= older_than:
                        continue
                    if entry.is_dir() and not entry.is_symlink():
                        shutil.rmtree(entry)
                    else:
                        entry.unlink()
                except FileNotFoundError:  # its upload finished and cleaned up meanwhile
                    continue
                removed.append(f"{area}/{entry.name}")
        return removed
