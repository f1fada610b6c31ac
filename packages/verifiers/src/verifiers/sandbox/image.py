"""The image provider: sandboxes whose root filesystem is a container image (`SandboxSpec.image`,
e.g. an R2E-Gym or SWE-bench instance image), pulled over the registry API (`registry`),
unpacked once into a content-addressed cache (`rootfs`) and run under bubblewrap with the
bwrap tier's isolation (namespaces, no host environment or paths, no network unless asked,
cgroup limits, the seccomp filter).

Each sandbox sees the image through an overlay whose writable layer is a tmpfs of
`spec.disk` bytes (pages charged to its memory cgroup): the whole image is its own to change
and nothing of it outlives the sandbox or reaches the cache. The overlay is mounted by the
launcher in a private mount namespace, from a descriptor path and relative directory names,
so the mount table inside shows no host path. The agent runs on the host's Python, mounted
read-only at `/.vf/usr` and started through the host's loader (the image needs no Python of
its own); commands run the image's programs with the image's libraries.

Without `spec.image` the root is an empty read-only layer holding the host's /usr, /etc and
workspace exactly as in the bwrap tier (so the isolation suite checks this tier's mounts)."""

from __future__ import annotations

import asyncio
import ctypes
import fcntl
import itertools
import json
import logging
import os
import shutil
import tarfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verifiers.sandbox import cgroups, contract
from verifiers.sandbox.base import ProviderUnavailableError, SandboxCreationError, SandboxSpec
from verifiers.sandbox.bwrap import BwrapProvider, BwrapSandbox
from verifiers.sandbox.contract import INNER_UID
from verifiers.sandbox.registry import Client, ImagePullError, ImageRef
from verifiers.sandbox.rootfs import LayerError, UnpackCaps, unpack_layer
from verifiers.sandbox.runtime import CACHE, ensure_runtime
from verifiers.sandbox.support import AGENT_BOOT, SANDBOX_UID, agent_files

logger = logging.getLogger("verifiers.sandbox")
HOST_USR = "/.vf/usr"  # where image sandboxes see the host's /usr (the agent's Python)
_counter = itertools.count()
_libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS = 0x00020000
MS_NOSUID, MS_NODEV, MS_REC, MS_PRIVATE = 2, 4, 1 << 14, 1 << 18


@dataclass(frozen=True)
class Image:
    name: str
    digest: str  # of the platform manifest
    rootfs: Path
    config: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @property
    def env(self) -> dict[str, str]:
        """The image's own `Env` (not applied: a sandbox's environment is `spec.env`)."""
        pairs = (self.config.get("config") or {}).get("Env") or []
        return dict(p.split("=", 1) for p in pairs if "=" in p)


class ImageStore:
    """Pulled images as unpacked root filesystems under `root` (`rootfs/<manifest digest>`),
    built once per image under a file lock; the tag -> digest resolution is kept per process.
    An image may unpack to `max_layer_bytes` per layer and `max_image_bytes` in all (None:
    `VF_IMAGE_MAX_LAYER_BYTES` / `VF_IMAGE_MAX_IMAGE_BYTES`, read when a pull starts, else
    16 and 32 GiB; see `rootfs.UnpackCaps`)."""

    def __init__(
        self,
        root: Path | None = None,
        uid: int = SANDBOX_UID,
        max_layer_bytes: int | None = None,
        max_image_bytes: int | None = None,
    ) -> None:
        self.root = Path(root) if root is not None else CACHE / "images"
        self.uid = uid
        self.max_layer_bytes, self.max_image_bytes = max_layer_bytes, max_image_bytes
        self._resolved: dict[str, Image] = {}

    def _dirs(self) -> None:
        for d in (self.root.parent, self.root, self.root / "rootfs", self.root / "stage"):
            d.mkdir(exist_ok=True)
            os.chmod(d, 0o755)  # the sandbox uid traverses to the stage mount point

    @property
    def stage(self) -> Path:
        """The mount point each launcher covers with its own tmpfs, privately."""
        return self.root / "stage"

    def scratch(self) -> Path:
        """An empty root (the no-image case)."""
        self._dirs()
        d = self.root / "rootfs" / "scratch"
        d.mkdir(exist_ok=True)
        os.chmod(d, 0o755)
        return d

    def cached(self, name: str) -> Image | None:
        """`name` if this store has resolved and unpacked it in this process."""
        return self._resolved.get(name)

    def get(self, name: str) -> Image:
        """The unpacked image `name`, pulled now if it is not in the cache (blocking)."""
        if name in self._resolved:
            return self._resolved[name]
        try:
            ref = ImageRef.parse(name)
        except ValueError as e:
            raise ImagePullError(f"cannot pull image {name!r}: {e}") from None
        client = Client(ref)
        resolved = client.resolve()
        digest = resolved[0]
        self._dirs()
        key = digest.split(":", 1)[1]
        target = self.root / "rootfs" / key
        ready = self.root / "rootfs" / f"{key}.json"
        if not ready.exists():
            with open(self.root / "rootfs" / f"{key}.lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                if not ready.exists():
                    self._build(client, resolved, target, ready)
        image = Image(name, digest, target, json.loads(ready.read_text()))
        self._resolved[name] = image
        return image

    def _build(
        self, client: Client, resolved: tuple[str, dict[str, Any]], target: Path, ready: Path
    ) -> None:
        tmp = target.with_name(f"{target.name}.tmp-{os.getpid()}")
        blobs = target.with_name(f"{target.name}.blobs-{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(target, ignore_errors=True)
        try:
            try:
                caps = UnpackCaps.from_env(self.max_layer_bytes, self.max_image_bytes)
            except LayerError as e:
                raise client.fail(str(e)) from None
            pulled = client.pull(blobs, resolved, caps.max_layer_bytes, caps.max_image_bytes)
            tmp.mkdir()
            os.chown(tmp, self.uid, self.uid)
            os.chmod(tmp, 0o755)
            devices = 0
            for layer in pulled.layers:
                path = blobs / str(layer["digest"]).replace(":", "-")
                try:
                    devices += unpack_layer(
                        tmp, path, str(layer.get("mediaType", "")), self.uid, self.uid, caps
                    )["devices"]
                except (
                    LayerError,
                    OSError,
                    EOFError,
                    ValueError,
                    tarfile.TarError,
                    zlib.error,
                ) as e:
                    raise client.fail(f"layer {layer.get('digest')}: {e}") from None
            if devices:
                logger.info("image %s: %d device nodes/FIFOs not created", client.ref, devices)
            _drop_replaced_links(tmp)
            os.rename(tmp, target)
            ready.write_text(json.dumps(pulled.config))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
            shutil.rmtree(blobs, ignore_errors=True)


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount_overlay(stage: str, lower: str, disk: int, upper_mode: int, uid: int) -> None:
    """In the launcher, before it execs bwrap: a private mount namespace in which `stage` is
    covered by a tmpfs holding the writable layer, and `stage/m` is the overlay. Named by a
    descriptor path and relative directories (the options are what the mount table shows)."""
    _check(_libc.unshare(CLONE_NEWNS), "unshare")
    _check(_libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate")
    opts = f"size={disk},mode=0755".encode()
    _check(_libc.mount(b"tmpfs", stage.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, opts), "tmpfs")
    os.chdir(stage)
    for d in ("u", "w", "m"):
        os.mkdir(d)
    os.chown("u", uid, uid)
    os.chmod("u", upper_mode)
    fd = os.open(lower, os.O_RDONLY | os.O_DIRECTORY)
    try:
        opts = f"lowerdir=/proc/self/fd/{fd},upperdir=u,workdir=w".encode()
        _check(_libc.mount(b"overlay", b"m", b"overlay", MS_NODEV, opts), "overlay")
    finally:
        os.close(fd)
    os.chdir("/")


def host_loader() -> str | None:
    """The host's dynamic loader as seen below HOST_USR (None: not under /usr here)."""
    real = os.path.realpath("/lib64/ld-linux-x86-64.so.2")
    if not os.path.exists(real):
        for cand in ("/lib/ld-linux-aarch64.so.1",):
            if os.path.exists(cand):
                real = os.path.realpath(cand)
    if not real.startswith("/usr/") or not os.path.exists(real):
        return None
    return HOST_USR + real[len("/usr") :]


# Files every image sandbox gets written over (bwrap `--file`), and directories bwrap creates
# or mounts on: bwrap resolves them with the host's old root still reachable, so none may be a
# symbolic link in the image (a link could lead it to a host directory).
REPLACED = ("etc/hosts", "etc/hostname", "etc/nsswitch.conf", "etc/passwd", "etc/group",
            "etc/resolv.conf")  # fmt: skip
MOUNT_POINTS = ("/.vf/usr", "/proc", "/dev", "/tmp", "/etc", "/opt/agent/__pycache__")


def _drop_replaced_links(rootfs: Path) -> None:
    """Remove the image's symlinks at the paths a sandbox writes over (their content is
    replaced anyway); a linked /etc itself is refused at launch."""
    if (rootfs / "etc").is_symlink():
        return
    for rel in REPLACED:
        if (rootfs / rel).is_symlink():
            (rootfs / rel).unlink()


def _check_links(image: Image, paths: list[str]) -> None:
    for path in paths:
        cur = image.rootfs
        for part in path.strip("/").split("/"):
            cur = cur / part
            if cur.is_symlink():
                rel = "/" + str(cur.relative_to(image.rootfs))
                raise SandboxCreationError(
                    f"image {image.name}: {rel} is a symbolic link; the sandbox creates or "
                    "mounts there, so it must be a directory or absent"
                )


def _etc_account(rootfs: Path, name: str, line: str) -> bytes:
    """The image's passwd/group with the sandbox user added when its id is not there (read
    without following links: `_check_links` and `_drop_replaced_links` ran first)."""
    try:
        fd = os.open(rootfs / "etc" / name, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as f:
            old = f.read(1 << 20)
    except OSError:
        old = b""
    ids = {ln.split(b":")[2] for ln in old.splitlines() if ln.count(b":") >= 3}
    if str(INNER_UID).encode() in ids:
        return old
    return (old.rstrip(b"\n") + b"\n" if old.strip() else b"") + line.encode()


class ImageProvider(BwrapProvider):
    """Sandboxes from container images (`SandboxSpec(image="repo/name:tag")`); bwrap exec'd
    per sandbox, as root (like the bwrap tier). `store`: where images are cached."""

    name = "image"
    supports_images = True

    def __init__(
        self,
        uid: int = SANDBOX_UID,
        start_timeout: float = 60.0,
        seccomp: bool = True,
        store: ImageStore | None = None,
    ) -> None:
        super().__init__(uid=uid, start_timeout=start_timeout, seccomp=seccomp, zygote=False)
        self.store = store or ImageStore(uid=uid)
        self._pulls: dict[tuple[int, str], asyncio.Task[Image]] = {}

    @staticmethod
    def unavailable_reason() -> str | None:
        reason = BwrapProvider.unavailable_reason()
        if reason is None and host_loader() is None:
            return "the host's dynamic loader is not under /usr (the agent's Python is mounted from there)"
        return reason

    async def image(self, name: str) -> Image:
        """Pull and unpack `name` (once, however many creates ask at the same time; a failed
        pull is tried again by the next create). Pulls in flight are per event loop, as a
        trainer may run each step in a fresh `asyncio.run`."""
        cached = self.store.cached(name)
        if cached is not None:
            return cached
        loop = asyncio.get_running_loop()
        key = (id(loop), name)
        task = self._pulls.get(key)
        if task is None or task.done():
            task = loop.create_task(asyncio.to_thread(self.store.get, name))
            self._pulls[key] = task
            task.add_done_callback(
                lambda t: self._pulls.pop(key, None) if self._pulls.get(key) is t else None
            )
        return await asyncio.shield(task)

    async def _create(self, spec: SandboxSpec) -> BwrapSandbox:
        if spec.image is None:
            venv = None
            if spec.runtime.packages:
                venv = await asyncio.to_thread(ensure_runtime, spec.runtime)
            return await self._launch(spec, self.store.scratch(), None, venv)
        if spec.runtime.packages:
            raise ProviderUnavailableError(
                f"image {spec.image}: runtime packages cannot be added to an image sandbox "
                "(the image brings its own software)"
            )
        image = await self.image(spec.image)
        box = await self._launch(spec, image.rootfs, image, None)
        box.image = image  # type: ignore[attr-defined]
        return box

    def image_argv(
        self, spec: SandboxSpec, image: Image, seccomp_fd: int | None
    ) -> tuple[list[str], dict[str, bytes]]:
        """bwrap's arguments for an image root (after `--bind <overlay> /`)."""
        wd = spec.workdir
        _check_links(image, [*MOUNT_POINTS, wd])
        args = [
            "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
            "--new-session", "--uid", str(INNER_UID), "--gid", str(INNER_UID),
            "--hostname", "sandbox",
            "--dir", "/.vf", "--dir", HOST_USR, "--ro-bind", "/usr", HOST_USR,
            "--proc", "/proc", "--dev", "/dev",
            "--dir", "/tmp", "--dir", wd, "--dir", "/etc",
            "--dir", "/opt/agent", "--dir", "/opt/agent/__pycache__",
        ]  # fmt: skip
        etc = contract.etc_files(spec.network)
        files = {f"/etc/{n}": etc[n] for n in ("hosts", "hostname", "nsswitch.conf")}
        if spec.network and "resolv.conf" in etc:
            files["/etc/resolv.conf"] = etc["resolv.conf"]
        files["/etc/passwd"] = _etc_account(
            image.rootfs, "passwd", f"sandbox:x:{INNER_UID}:{INNER_UID}::{wd}:/bin/sh\n"
        )
        files["/etc/group"] = _etc_account(image.rootfs, "group", f"sandbox:x:{INNER_UID}:\n")
        files |= {f"/opt/agent/{rel}": data for rel, data in agent_files().items()}
        _check_links(image, list(files))  # (links at /etc's were dropped when unpacking)
        if spec.network:
            args += ["--share-net"]
        if seccomp_fd is not None:
            args += ["--seccomp", str(seccomp_fd)]
        args += ["--chdir", wd, "--clearenv"]
        for k, v in contract.sandbox_environ(spec).items():
            args += ["--setenv", k, v]
        args += ["--setenv", "VF_REPL_PYTHON", "python3"]  # the REPL runs the image's Python
        loader = host_loader()
        assert loader is not None
        libs = ":".join(f"{HOST_USR}/lib/{d}" for d in _lib_dirs())
        python = [loader, "--library-path", libs, f"{HOST_USR}/bin/python3"]
        return [*args, "--", *python, "-u", "-I", "-S", "-c", AGENT_BOOT], files

    async def _launch(
        self, spec: SandboxSpec, lower: Path, image: Image | None, venv: Path | None
    ) -> BwrapSandbox:
        sid = f"{os.getpid()}-i{next(_counter)}"
        cg = cgroups.for_sandbox(
            cgroups.group_name(str(next(_counter))), spec.memory, spec.pids, spec.cpu
        )
        procs, uid = cg.join_files(), self.uid
        stage, lower_s, disk = str(self.store.stage), str(lower), spec.disk
        upper_mode = 0o755

        def child_setup() -> None:  # in the forked launcher, before it execs bwrap
            cgroups.join(procs)
            _mount_overlay(stage, lower_s, disk, upper_mode, uid)
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)

        def argv(seccomp_fd: int | None) -> tuple[list[str], dict[str, bytes]]:
            if image is None:
                return self.argv(spec, venv, seccomp_fd)
            return self.image_argv(spec, image, seccomp_fd)

        return await self._exec_bwrap(
            spec,
            sid,
            cg,
            child_setup,
            argv,
            head=["--bind", f"{stage}/m", "/"],  # the first mount: everything else goes on it
            what=f"image {image.name}" if image else "an image sandbox",
            stderr=None if os.environ.get("VF_IMAGE_DEBUG") else asyncio.subprocess.DEVNULL,
        )


def _lib_dirs() -> list[str]:
    """The host's library directories below /usr/lib (multiarch first)."""
    out = []
    for d in sorted(Path("/usr/lib").glob("*-linux-gnu*")):
        if d.is_dir():
            out.append(d.name)
    return out or ["x86_64-linux-gnu"]
