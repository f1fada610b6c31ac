"""A small read-only container registry speaking the distribution API (bearer-token handshake,
image index -> manifest -> blobs, blob downloads redirected elsewhere as Docker Hub's are), and
helpers that build image layers, e.g. from the host's own programs. For tests and offline
use: pull through `ImageProvider` from `127.0.0.1:<port>/name:tag` with no Docker anywhere."""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tarfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verifiers.sandbox.registry import platform_arch

OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
OCI_LAYER_GZ = "application/vnd.oci.image.layer.v1.tar+gzip"


def digest_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@dataclass
class Layer:
    """A layer under construction: entries in order, then `tar_gz()`."""

    entries: list[tuple[tarfile.TarInfo, bytes | None]] = field(default_factory=list)

    def _info(self, path: str, kind: bytes, mode: int) -> tarfile.TarInfo:
        info = tarfile.TarInfo(path)
        info.type, info.mode, info.mtime = kind, mode, 1_700_000_000
        return info

    def file(self, path: str, data: bytes | str, mode: int = 0o644) -> Layer:
        raw = data.encode() if isinstance(data, str) else data
        self.entries.append((self._info(path, tarfile.REGTYPE, mode), raw))
        return self

    def dir(self, path: str, mode: int = 0o755) -> Layer:
        self.entries.append((self._info(path, tarfile.DIRTYPE, mode), None))
        return self

    def symlink(self, path: str, target: str) -> Layer:
        info = self._info(path, tarfile.SYMTYPE, 0o777)
        info.linkname = target
        self.entries.append((info, None))
        return self

    def hardlink(self, path: str, target: str) -> Layer:
        info = self._info(path, tarfile.LNKTYPE, 0o644)
        info.linkname = target
        self.entries.append((info, None))
        return self

    def device(self, path: str) -> Layer:
        info = self._info(path, tarfile.CHRTYPE, 0o666)
        info.devmajor, info.devminor = 1, 3
        self.entries.append((info, None))
        return self

    def whiteout(self, path: str) -> Layer:
        head, _, base = path.rpartition("/")
        return self.file(f"{head}/.wh.{base}" if head else f".wh.{base}", b"")

    def opaque(self, directory: str) -> Layer:
        return self.file(f"{directory.rstrip('/')}/.wh..wh..opq", b"")

    def tar_gz(self, level: int = 1) -> bytes:
        """The layer as a gzip'd tar (`level` 1: fast; layers built here are tests' and
        short-lived)."""
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=level) as tar:
            for info, data in self.entries:
                if data is not None:
                    info.size = len(data)
                tar.addfile(info, io.BytesIO(data) if data is not None else None)
        return buf.getvalue()


_LDD = re.compile(r"(/\S+)")


def _needed(binary: str) -> list[str]:
    """The shared libraries `binary` loads (by `ldd`), as paths that exist."""
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=False).stdout
    return [lib for lib in _LDD.findall(out) if os.path.exists(lib)]


def host_programs(names: list[str], python: bool = False) -> Layer:
    """A merged-/usr layer holding the host's `names` (found on PATH), the shared libraries
    they load (by `ldd`) and the loader; `python=True` adds python3 and its standard library
    (without tests, GUI toolkits or site-packages)."""
    layer = Layer()
    for d in ("usr", "usr/bin", "usr/lib", "usr/lib64", "etc", "tmp"):
        layer.dir(d, 0o1777 if d == "tmp" else 0o755)
    for link, target in (("bin", "usr/bin"), ("lib", "usr/lib"), ("lib64", "usr/lib64")):
        layer.symlink(link, target)
    seen: set[str] = set()
    dirs: set[str] = {"usr", "usr/bin", "usr/lib", "usr/lib64"}

    def add(real: str, as_name: str | None = None) -> None:
        rel = (as_name or real).lstrip("/")
        if rel.startswith(("lib/", "lib64/", "bin/")):
            rel = "usr/" + rel
        if rel in seen:
            return
        parts = rel.split("/")
        for i in range(1, len(parts)):
            d = "/".join(parts[:i])
            if d not in dirs:
                dirs.add(d)
                layer.dir(d)
        seen.add(rel)
        layer.file(rel, Path(real).read_bytes(), os.stat(real).st_mode & 0o755)

    programs = [shutil.which(n) or n for n in names]
    if python:
        programs.append(os.path.realpath("/usr/bin/python3"))
    for prog in programs:
        real = os.path.realpath(prog)
        add(real, "/usr/bin/" + os.path.basename(prog))
        for lib in _needed(real):
            add(os.path.realpath(lib), lib)
    if python:
        real_name = os.path.basename(os.path.realpath("/usr/bin/python3"))
        layer.symlink("usr/bin/python3", real_name).symlink("usr/bin/python", real_name)
        stdlib = Path(os.path.realpath("/usr/bin/python3")).name  # python3.X
        root = Path("/usr/lib") / stdlib
        skip = {"test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3",
                "pydoc_data", "site-packages", "dist-packages", "__pycache__"}  # fmt: skip
        for p in sorted(root.rglob("*")):
            rel = p.relative_to(root)
            if any(part in skip or part.startswith("config-") for part in rel.parts):
                continue
            if p.is_dir() and not p.is_symlink():
                layer.dir(f"usr/lib/{stdlib}/{rel}")
            elif p.is_file() and not p.is_symlink():
                add(str(p))
                if p.suffix == ".so":
                    for lib in _needed(str(p)):
                        add(os.path.realpath(lib), lib)
    return layer


#: the programs of a python:3.X-slim stand-in (bash, coreutils and the tools scripts reach for)
PYTHON_IMAGE_PROGRAMS = (
    "bash", "sh", "cat", "ls", "mkdir", "touch", "rm", "cp", "mv", "ln", "chmod", "head",
    "tail", "sed", "grep", "find", "xargs", "wc", "sort", "env", "id", "sleep", "dd", "tr",
    "cut", "date", "uname", "df", "du", "which",
)  # fmt: skip


def python_image_layers(
    programs: tuple[str, ...] | list[str] = PYTHON_IMAGE_PROGRAMS,
) -> list[Layer]:
    """A stand-in for Docker Hub's `python:3.X-slim` built from the host's own files: its
    programs, python3 with the standard library, pip (the host's, where it has one), `/root`,
    and no EXTERNALLY-MANAGED marker (a whiteout over the standard library's copy: pip
    installs into the image, as in the official images). Programs the host lacks are left
    out."""
    base = host_programs([p for p in programs if shutil.which(p)], python=True)
    extra = Layer().dir("root", 0o700)
    dist = Path("/usr/lib/python3/dist-packages")
    if (dist / "pip").is_dir():
        extra.dir("usr/lib/python3").dir("usr/lib/python3/dist-packages")
        for top in sorted(dist.glob("pip*")):
            for p in [top, *sorted(top.rglob("*"))] if top.is_dir() else [top]:
                rel = f"usr/lib/python3/dist-packages/{p.relative_to(dist)}"
                if "__pycache__" in p.parts or p.is_symlink():
                    continue
                if p.is_dir():
                    extra.dir(rel)
                elif p.is_file():
                    extra.file(rel, p.read_bytes())
    stdlib = Path(os.path.realpath("/usr/bin/python3")).name  # python3.X
    if Path("/usr/lib", stdlib, "EXTERNALLY-MANAGED").exists():
        extra.whiteout(f"usr/lib/{stdlib}/EXTERNALLY-MANAGED")
    return [base, extra]


def send_reply(
    h: http.server.BaseHTTPRequestHandler,
    code: int,
    body: bytes = b"",
    headers: dict[str, str] | None = None,
) -> None:
    """Answer the request `h` handles with `code`, `headers` and `body` (a route of
    `LocalRegistry.routes` answers with this too)."""
    h.send_response(code)
    for k, v in (headers or {}).items():
        h.send_header(k, v)
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    h.wfile.write(body)


@dataclass
class _Blob:
    data: bytes
    media_type: str = "application/octet-stream"


class LocalRegistry:
    """A registry on 127.0.0.1 serving the images added with `add_image`. `auth=True`: Docker
    Hub's token handshake (401 with a Bearer challenge, a token endpoint, tokens checked);
    `redirect_blobs=True`: blob downloads answered with a 307 to a path that refuses any
    Authorization header (as the storage behind Docker Hub does). `token_server`: another
    LocalRegistry whose `/token` the challenge names as its realm (a realm on another host).

    For hostile-registry tests: `routes` maps a path (query excluded) to a function answering
    the request in place of the registry (no token check), `put` adds a raw blob, and `authorizations` records
    each request's (path, Authorization header)."""

    def __init__(
        self,
        auth: bool = True,
        redirect_blobs: bool = True,
        token_server: LocalRegistry | None = None,
    ) -> None:
        self.auth, self.redirect_blobs = auth, redirect_blobs
        self.token_server = token_server
        self.blobs: dict[str, _Blob] = {}
        self.manifests: dict[tuple[str, str], str] = {}  # (repo, tag or digest) -> digest
        self.tokens: set[str] = set()
        self.requests: list[str] = []
        self.authorizations: list[tuple[str, str | None]] = []
        self.routes: dict[str, Callable[[http.server.BaseHTTPRequestHandler], None]] = {}
        self.corrupt: set[str] = set()  # digests served with one byte changed
        registry = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                registry.requests.append(self.path)
                registry.authorizations.append((self.path, self.headers.get("Authorization")))
                registry._serve(self)

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.host = f"127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> LocalRegistry:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def put(self, data: bytes, media_type: str) -> str:
        d = digest_of(data)
        self.blobs[d] = _Blob(data, media_type)
        return d

    def add_image(
        self,
        repo: str,
        tag: str,
        layers: Sequence[Layer | bytes],
        config: dict[str, Any] | None = None,
        index: bool = True,
    ) -> str:
        """Publish an image; returns the platform manifest's digest. `index=True` wraps it in
        an image index next to a manifest for another architecture. A layer given as bytes is
        served as they are (a crafted blob)."""
        blobs = [lay if isinstance(lay, bytes) else lay.tar_gz() for lay in layers]
        cfg = {
            "architecture": platform_arch(),
            "os": "linux",
            "config": config or {},
            "rootfs": {"type": "layers", "diff_ids": [digest_of(b) for b in blobs]},
        }
        raw_cfg = json.dumps(cfg).encode()
        manifest = {
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "config": {"mediaType": OCI_CONFIG, "digest": self.put(raw_cfg, OCI_CONFIG),
                       "size": len(raw_cfg)},
            "layers": [{"mediaType": OCI_LAYER_GZ, "digest": self.put(b, OCI_LAYER_GZ),
                        "size": len(b)} for b in blobs],
        }  # fmt: skip
        raw = json.dumps(manifest).encode()
        digest = self.put(raw, OCI_MANIFEST)
        self.manifests[(repo, digest)] = digest
        top = digest
        if index:
            other = json.dumps({**manifest, "layers": []}).encode()
            doc = {
                "schemaVersion": 2,
                "mediaType": OCI_INDEX,
                "manifests": [
                    {"mediaType": OCI_MANIFEST, "digest": self.put(other, OCI_MANIFEST),
                     "size": len(other), "platform": {"os": "linux", "architecture": "s390x"}},
                    {"mediaType": OCI_MANIFEST, "digest": digest, "size": len(raw),
                     "platform": {"os": "linux", "architecture": platform_arch()}},
                ],
            }  # fmt: skip
            raw_index = json.dumps(doc).encode()
            top = self.put(raw_index, OCI_INDEX)
            self.manifests[(repo, top)] = top
        self.manifests[(repo, tag)] = top
        return digest

    # -- HTTP ------------------------------------------------------------------------------
    def _serve(self, h: Any) -> None:
        path = h.path.partition("?")[0]
        if path in self.routes:
            return self.routes[path](h)
        if path == "/token":
            token = secrets.token_hex(8)
            self.tokens.add(token)
            return send_reply(h, 200, json.dumps({"token": token}).encode())
        if path.startswith("/storage/"):
            if h.headers.get("Authorization"):
                return send_reply(h, 400, b"only one auth mechanism allowed")
            return self._blob(h, path[len("/storage/") :])
        if self.auth:
            issuer = self.token_server or self
            given = (h.headers.get("Authorization") or "").removeprefix("Bearer ")
            if given not in issuer.tokens:
                challenge = (f'Bearer realm="http://{issuer.host}/token",service="local",'
                             'scope="repository:x:pull"')  # fmt: skip
                return send_reply(h, 401, b"{}", {"WWW-Authenticate": challenge})
        if path == "/v2/":
            return send_reply(h, 200, b"{}")
        m = re.match(r"^/v2/(.+)/(manifests|blobs)/([^/]+)$", path)
        if not m:
            return send_reply(h, 404, b'{"errors":[{"code":"NAME_UNKNOWN"}]}')
        repo, kind, ref = m.groups()
        if kind == "manifests":
            digest = self.manifests.get((repo, ref))
            if digest is None:
                return send_reply(h, 404, b'{"errors":[{"code":"MANIFEST_UNKNOWN"}]}')
            blob = self.blobs[digest]
            return send_reply(
                h,
                200,
                self._bytes(digest),
                {"Content-Type": blob.media_type, "Docker-Content-Digest": digest},
            )
        if ref not in self.blobs:
            return send_reply(h, 404, b'{"errors":[{"code":"BLOB_UNKNOWN"}]}')
        if self.redirect_blobs:
            return send_reply(h, 307, b"", {"Location": f"/storage/{ref}"})
        return self._blob(h, ref)

    def _blob(self, h: Any, digest: str) -> None:
        if digest not in self.blobs:
            return send_reply(h, 404, b"")
        send_reply(h, 200, self._bytes(digest), {"Content-Type": "application/octet-stream"})

    def _bytes(self, digest: str) -> bytes:
        data = self.blobs[digest].data
        if digest in self.corrupt:
            data = data[:-1] + bytes([data[-1] ^ 1])
        return data


def serve(images: list[str]) -> None:
    """Serve `images` (`repo:tag`, each the python stand-in) on 127.0.0.1 without the token
    handshake, print `READY <host:port>` and run until stdin closes: a registry to name in
    VF_REGISTRY_MIRROR for a run that has no other (bench/compat/run.py)."""
    layers = python_image_layers()
    with LocalRegistry(auth=False) as registry:
        for ref in images:
            repo, _, tag = ref.partition(":")
            repo = repo if "/" in repo else f"library/{repo}"
            registry.add_image(repo, tag or "latest", layers)
        print(f"READY {registry.host}", flush=True)
        sys.stdin.read()
