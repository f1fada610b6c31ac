"""Image layers unpacked into a root filesystem directory, safely: every path stays inside the
root (names with `..` or a leading `/` are refused, and a symlink met on the way is resolved
as it would be inside the root, never on the host), hard links may only point at files
inside, device nodes and FIFOs are never created, set-id bits are dropped, and the OCI
whiteouts (`.wh.NAME` deletes NAME, `.wh..wh..opq` empties a directory of the layers below)
are applied. Everything is owned by one host uid (the sandbox's), so that inside the sandbox's
user namespace the whole image belongs to the sandbox user."""

from __future__ import annotations

import gzip
import logging
import os
import posixpath
import shutil
import tarfile
from pathlib import Path
from typing import BinaryIO

logger = logging.getLogger("verifiers.sandbox")

WHITEOUT = ".wh."
OPAQUE = ".wh..wh..opq"
MAX_LINKS = 40  # symlinks followed while resolving one path (as the kernel's limit)


class LayerError(ValueError):
    """A layer that cannot be unpacked safely (the message names the entry)."""


def _clean(name: str) -> str:
    """The entry's path relative to the root; refuses absolute paths and `..`."""
    if "\x00" in name:
        raise LayerError(f"entry {name!r}: NUL in its name")
    rel = name[2:] if name.startswith("./") else name
    if rel.startswith("/"):
        raise LayerError(f"entry {name!r}: absolute path")
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise LayerError(f"entry {name!r}: '..' in its path")
    return "/".join(parts)


def resolve(root: Path, rel: str, follow_last: bool = False) -> Path:
    """Where `rel` is on the host when looked up inside `root` (as if `root` were `/`):
    symlinks are followed with absolute targets taken from `root` and `..` stopping at it."""
    todo = [p for p in rel.split("/") if p not in ("", ".")]
    done: list[str] = []
    links = 0
    while todo:
        part = todo.pop(0)
        if part == "..":
            if done:
                done.pop()
            continue
        here = root.joinpath(*done, part)
        if (todo or follow_last) and here.is_symlink():
            links += 1
            if links > MAX_LINKS:
                raise LayerError(f"{rel!r}: too many levels of symbolic links")
            target = os.readlink(here)
            if target.startswith("/"):
                done = []
            todo = [p for p in target.split("/") if p not in ("", ".")] + todo
            continue
        done.append(part)
    return root.joinpath(*done)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _open_layer(path: Path, media_type: str) -> BinaryIO:
    """The layer's tar stream: gzip'd or plain, told apart by its first bytes."""
    if "zstd" in media_type:
        raise LayerError(f"zstd-compressed layers are not supported ({media_type})")
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rb") if gz else open(path, "rb")  # type: ignore[return-value]


def unpack_layer(
    root: Path, layer: Path, media_type: str = "", uid: int = 0, gid: int = 0
) -> dict[str, int]:
    """Apply one layer to `root`. Returns counts of what was skipped (device nodes, ...)."""
    skipped = {"devices": 0}
    written: set[str] = set()  # entries of this layer (an opaque marker keeps them)
    with _open_layer(layer, media_type) as raw, tarfile.open(fileobj=raw, mode="r|") as tar:
        for member in tar:
            rel = _clean(member.name)
            if not rel:
                continue  # the root itself
            parent_rel, base = posixpath.split(rel)
            parent = resolve(root, parent_rel, follow_last=True)
            if not parent.is_dir():
                if parent.exists() or parent.is_symlink():
                    raise LayerError(f"entry {member.name!r}: its parent is not a directory")
                parent.mkdir(parents=True)
                os.chown(parent, uid, gid)
            if base == OPAQUE:
                for child in list(parent.iterdir()):
                    child_rel = posixpath.join(parent_rel, child.name)
                    if child_rel not in written:
                        _remove(child)
                continue
            if base.startswith(WHITEOUT):
                _remove(parent / base[len(WHITEOUT) :])
                continue
            target = parent / base
            written.add(rel)
            if member.isdir():
                if target.is_symlink() or (target.exists() and not target.is_dir()):
                    _remove(target)
                target.mkdir(exist_ok=True)
                os.chown(target, uid, gid)
                os.chmod(target, member.mode & 0o1777)  # (sticky kept: /tmp)
                continue
            if member.ischr() or member.isblk() or member.isfifo():
                skipped["devices"] += 1
                continue
            _remove(target)
            if member.issym():
                os.symlink(member.linkname, target)
                os.lchown(target, uid, gid)
            elif member.islnk():
                source = resolve(root, _clean(member.linkname))
                if source.is_symlink() or not source.is_file():
                    raise LayerError(
                        f"entry {member.name!r}: hard link to {member.linkname!r}, "
                        "which is not a regular file of the image"
                    )
                os.link(source, target)
            elif member.isfile():
                src = tar.extractfile(member)
                assert src is not None
                with open(target, "xb") as out:
                    shutil.copyfileobj(src, out, 1 << 20)
                os.chown(target, uid, gid)
                os.chmod(target, member.mode & 0o777)  # no set-uid/set-gid
                os.utime(target, (member.mtime, member.mtime))
            else:
                raise LayerError(f"entry {member.name!r}: unsupported type {member.type!r}")
    return skipped
