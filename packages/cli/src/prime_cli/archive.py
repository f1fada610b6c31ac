"""Safe extraction of a source archive (no links, devices, absolute paths or `..`)."""

from __future__ import annotations

import tarfile
from pathlib import Path, PurePosixPath

from .errors import InstallError


def safe_extract(archive: Path, dest: Path) -> list[str]:
    """Extract regular files and directories of `archive` into `dest`, dropping the single
    top-level folder an sdist has (`name-1.0/`). Refuses the whole archive if any member is a
    link or device, or would land outside `dest`."""
    try:
        tf = tarfile.open(archive, "r:*")
    except (tarfile.TarError, OSError) as e:
        raise InstallError(f"{archive.name} is not a readable archive: {e}") from None
    with tf:
        members = tf.getmembers()
        tops = {PurePosixPath(m.name).parts[0] for m in members if PurePosixPath(m.name).parts}
        strip = len(tops) == 1 and all(
            m.isdir() or len(PurePosixPath(m.name).parts) > 1 for m in members
        )
        root = dest.resolve()
        plan: list[tuple[tarfile.TarInfo, Path]] = []
        for m in members:
            p = PurePosixPath(m.name)
            if p.is_absolute() or ".." in p.parts:
                raise InstallError(f"{archive.name}: unsafe path {m.name!r}; nothing extracted")
            if not (m.isfile() or m.isdir()):
                raise InstallError(
                    f"{archive.name}: {m.name!r} is a link or special file; nothing extracted"
                )
            parts = p.parts[1:] if strip else p.parts
            if not parts:
                continue
            out = (root / Path(*parts)).resolve()
            if root != out and root not in out.parents:
                raise InstallError(f"{archive.name}: {m.name!r} escapes the target")
            plan.append((m, out))
        written = []
        for m, out in plan:
            if m.isdir():
                out.mkdir(parents=True, exist_ok=True)
                continue
            out.parent.mkdir(parents=True, exist_ok=True)
            src = tf.extractfile(m)
            if src is None:
                continue
            with src, open(out, "wb") as f:
                while chunk := src.read(1024 * 1024):
                    f.write(chunk)
            out.chmod(0o644 | (0o111 if m.mode & 0o100 else 0))
            written.append(str(out.relative_to(root)))
    return written
