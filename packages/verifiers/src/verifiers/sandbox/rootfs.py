"""Image layers unpacked into a root filesystem directory, safely: every path stays inside the
root (names with `..` or a leading `/` are refused, and a symlink met on the way is resolved
as it would be inside the root, never on the host), hard links may only point at files
inside, device nodes and FIFOs are never created, set-id bits are dropped, and the OCI
whiteouts (`.wh.NAME` deletes NAME, `.wh..wh..opq` empties a directory of the layers below)
are applied, a whiteout's target being a name confined like any other entry. Everything is
owned by one host uid (the sandbox's), so that inside the sandbox's user namespace the whole
image belongs to the sandbox user.

Sizes are capped (`UnpackCaps`): a layer's decompressed tar stream and the bytes its files
write out may each reach `max_layer_bytes`, and the sums over an image `max_image_bytes`;
unpacking stops as soon as one is passed (a gzip bomb, a sparse file of a huge apparent size)."""

from __future__ import annotations

import gzip
import logging
import os
import posixpath
import shutil
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

logger = logging.getLogger("verifiers.sandbox")

WHITEOUT = ".wh."
OPAQUE = ".wh..wh..opq"
MAX_LINKS = 40  # symlinks followed while resolving one path (as the kernel's limit)
GiB = 1 << 30
MAX_LAYER_BYTES = 16 * GiB  # defaults: the largest SWE-style images hold layers of a few GiB
MAX_IMAGE_BYTES = 32 * GiB


class LayerError(ValueError):
    """A layer that cannot be unpacked safely (the message names the entry)."""


def _env_bytes(var: str, default: int) -> int:
    raw = os.environ.get(var, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise LayerError(f"{var}={raw!r}: expected a positive number of bytes")
    return value


@dataclass
class UnpackCaps:
    """How much one image may unpack to, and what it has used so far. Two measures, each
    capped per layer and per image: the bytes of the decompressed tar stream (headers
    included: many empty files count) and the bytes written to files (a sparse entry is small
    in the stream and written out in full). Defaults: `VF_IMAGE_MAX_LAYER_BYTES` (16 GiB),
    `VF_IMAGE_MAX_IMAGE_BYTES` (32 GiB)."""

    max_layer_bytes: int = MAX_LAYER_BYTES
    max_image_bytes: int = MAX_IMAGE_BYTES
    image_read: int = 0
    image_written: int = 0
    layer_read: int = 0
    layer_written: int = 0

    @classmethod
    def from_env(cls, layer: int | None = None, image: int | None = None) -> UnpackCaps:
        """Caps given, else the environment's, else the defaults."""
        return cls(
            layer or _env_bytes("VF_IMAGE_MAX_LAYER_BYTES", MAX_LAYER_BYTES),
            image or _env_bytes("VF_IMAGE_MAX_IMAGE_BYTES", MAX_IMAGE_BYTES),
        )

    def start_layer(self) -> None:
        self.layer_read = self.layer_written = 0

    def charge(self, n: int, written: bool) -> None:
        """Count `n` bytes decompressed (or written); LayerError once a cap is passed."""
        if written:
            self.layer_written += n
            self.image_written += n
            layer, image = self.layer_written, self.image_written
        else:
            self.layer_read += n
            self.image_read += n
            layer, image = self.layer_read, self.image_read
        what = "written to files" if written else "decompressed"
        if layer > self.max_layer_bytes:
            raise LayerError(
                f"more than {layer - n} bytes {what}: unpacked past the per-layer cap of "
                f"{self.max_layer_bytes} bytes (VF_IMAGE_MAX_LAYER_BYTES)"
            )
        if image > self.max_image_bytes:
            raise LayerError(
                f"more than {image - n} bytes {what} by the image: unpacked past the "
                f"per-image cap of {self.max_image_bytes} bytes (VF_IMAGE_MAX_IMAGE_BYTES)"
            )


class _Counted:
    """A decompressed layer stream whose bytes are charged to the caps as they are read."""

    def __init__(self, stream: BinaryIO, caps: UnpackCaps) -> None:
        self.stream, self.caps = stream, caps

    def read(self, size: int = -1) -> bytes:
        data = self.stream.read(size if size is not None and size >= 0 else 1 << 20)
        self.caps.charge(len(data), written=False)
        return data


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


def _whiteout_target(entry: str, base: str) -> str:
    """The name `.wh.NAME` deletes: one plain name in the entry's own directory (never '.',
    '..' or empty, which would reach the directory itself or its parent)."""
    target = base[len(WHITEOUT) :]
    if target in ("", ".", "..") or "/" in target:
        raise LayerError(
            f"entry {entry!r}: a whiteout of {target!r}, which is not a name in its directory"
        )
    return target


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


def _copy(src: BinaryIO, dest: Path, caps: UnpackCaps) -> None:
    with open(dest, "xb") as out:
        while chunk := src.read(1 << 20):
            caps.charge(len(chunk), written=True)
            out.write(chunk)


def unpack_layer(
    root: Path,
    layer: Path,
    media_type: str = "",
    uid: int = 0,
    gid: int = 0,
    caps: UnpackCaps | None = None,
) -> dict[str, int]:
    """Apply one layer to `root`, within `caps` (the image's, shared by its layers; the
    environment's defaults when None). Returns counts of what was skipped (device nodes)."""
    caps = caps if caps is not None else UnpackCaps.from_env()
    caps.start_layer()
    skipped = {"devices": 0}
    written: set[str] = set()  # entries of this layer (an opaque marker keeps them)
    with (
        _open_layer(layer, media_type) as raw,
        tarfile.open(fileobj=_Counted(raw, caps), mode="r|") as tar,  # type: ignore[call-overload]
    ):
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
                _remove(parent / _whiteout_target(member.name, base))
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
                _copy(src, target, caps)
                os.chown(target, uid, gid)
                os.chmod(target, member.mode & 0o777)  # no set-uid/set-gid
                os.utime(target, (member.mtime, member.mtime))
            else:
                raise LayerError(f"entry {member.name!r}: unsupported type {member.type!r}")
    return skipped
