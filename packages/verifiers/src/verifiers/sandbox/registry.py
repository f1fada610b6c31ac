"""Pulling container images over the registry HTTP API (the OCI distribution spec, as Docker
Hub and every other registry speak it): image references, the bearer-token handshake, image
indexes -> this platform's manifest -> the config and layer blobs, every digest checked.

No Docker engine is needed. Settings (environment variables, read when a pull starts):

* ``VF_REGISTRY_MIRROR``: ``host[:port]`` that serves images named without a registry (Docker
  Hub's) instead of ``registry-1.docker.io`` (a pull-through cache or a private mirror).
* ``VF_INSECURE_REGISTRIES``: comma-separated ``host[:port]`` spoken to over plain HTTP
  (``localhost``, ``127.0.0.1`` and ``[::1]`` always are).
* ``VF_REGISTRY_USERNAME`` / ``VF_REGISTRY_PASSWORD``: credentials for the token (or basic)
  authentication; anonymous pulls otherwise.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from verifiers.sandbox.base import SandboxCreationError

DOCKER_HUB = "docker.io"
DOCKER_HUB_API = "registry-1.docker.io"
INDEX_TYPES = (
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
)
MANIFEST_TYPES = (
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
)
ACCEPT = ", ".join((*INDEX_TYPES, *MANIFEST_TYPES))
MAX_MANIFEST = 4 * 1024 * 1024
TIMEOUT = 60.0  # seconds per connection attempt / read

_REPO = re.compile(
    r"^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$"
)
_TAG = re.compile(r"^[\w][\w.-]{0,127}$")
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")


class ImagePullError(SandboxCreationError):
    """An image could not be pulled; the message names the image and the registry."""


@dataclass(frozen=True)
class ImageRef:
    registry: str  # as named (docker.io for Docker Hub)
    repository: str
    tag: str | None
    digest: str | None

    @classmethod
    def parse(cls, name: str) -> ImageRef:
        """Docker's reference rules: the first component is a registry when it has a '.' or
        ':' or is 'localhost'; Docker Hub names of one component live under 'library/'."""
        if not isinstance(name, str) or not name.strip() or name != name.strip():
            raise ValueError(f"not an image reference: {name!r}")
        rest, digest = name, None
        if "@" in rest:
            rest, digest = rest.split("@", 1)
            if not _DIGEST.match(digest):
                raise ValueError(f"{name!r}: only sha256 digests are supported, got {digest!r}")
        first, _, remainder = rest.partition("/")
        if remainder and ("." in first or ":" in first or first == "localhost"):
            registry, rest = first, remainder
        else:
            registry = DOCKER_HUB
        tag = None
        head, sep, last = rest.rpartition(":")
        if sep and "/" not in last:
            rest, tag = head, last
            if not _TAG.match(tag):
                raise ValueError(f"{name!r}: bad tag {tag!r}")
        if registry == DOCKER_HUB and "/" not in rest:
            rest = f"library/{rest}"
        if not _REPO.match(rest):
            raise ValueError(f"{name!r}: bad repository name {rest!r}")
        if tag is None and digest is None:
            tag = "latest"
        return cls(registry, rest, tag, digest)

    @property
    def reference(self) -> str:
        return self.digest or self.tag or "latest"

    def __str__(self) -> str:
        tail = f":{self.tag}" if self.tag else ""
        tail += f"@{self.digest}" if self.digest else ""
        return f"{self.registry}/{self.repository}{tail}"


def endpoint(registry: str) -> str:
    """The base URL spoken to for `registry` (mirror and plain-HTTP settings applied)."""
    host = registry
    if registry == DOCKER_HUB:
        host = os.environ.get("VF_REGISTRY_MIRROR", "").strip().rstrip("/") or DOCKER_HUB_API
    insecure = {"localhost", "127.0.0.1", "[::1]"}
    insecure |= {h.strip() for h in os.environ.get("VF_INSECURE_REGISTRIES", "").split(",")}
    bare = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    scheme = "http" if host in insecure or bare in insecure else "https"
    return f"{scheme}://{host}"


def platform_arch() -> str:
    machine = platform.machine().lower()
    return {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(
        machine, machine
    )


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # handled by `Client._open` (the token must not follow to a CDN)


_OPENER = urllib.request.build_opener(_NoRedirect())


def _www_authenticate(header: str) -> tuple[str, dict[str, str]]:
    scheme, _, params = header.strip().partition(" ")
    return scheme.lower(), dict(re.findall(r'(\w+)="([^"]*)"', params))


@dataclass
class Pulled:
    """What a pull resolved: the platform manifest's digest, the image config, the layers."""

    manifest_digest: str
    config: dict[str, Any]
    layers: list[dict[str, Any]]


class Client:
    """One image's conversation with its registry (the token is scoped to the repository)."""

    def __init__(self, ref: ImageRef) -> None:
        self.ref = ref
        self.base = endpoint(ref.registry)
        self._auth: str | None = None
        user = os.environ.get("VF_REGISTRY_USERNAME")
        self._basic = None
        if user:
            import base64

            pair = f"{user}:{os.environ.get('VF_REGISTRY_PASSWORD', '')}".encode()
            self._basic = "Basic " + base64.b64encode(pair).decode()

    def fail(self, what: str) -> ImagePullError:
        return ImagePullError(f"cannot pull image {self.ref} from {self.base}: {what}")

    def _open(self, url: str, accept: str | None = None, auth: bool = True) -> Any:
        for _ in range(6):  # redirects, and one authentication round
            req = urllib.request.Request(url)
            if accept:
                req.add_header("Accept", accept)
            if auth and self._auth:
                req.add_header("Authorization", self._auth)
            try:
                return _OPENER.open(req, timeout=TIMEOUT)
            except urllib.error.HTTPError as e:
                if e.code in (301, 302, 303, 307, 308) and e.headers.get("Location"):
                    url = urllib.parse.urljoin(url, e.headers["Location"])
                    # a redirect leads to storage (a signed URL): the registry's token is
                    # not sent there (storage behind Docker Hub refuses a second credential)
                    auth = False
                    continue
                if e.code == 401 and auth and self._auth is None:
                    self._authenticate(e.headers.get("WWW-Authenticate", ""))
                    continue
                detail = e.read(2000).decode("utf-8", "replace")
                raise self.fail(f"HTTP {e.code} for {url}: {detail.strip()[:300]}") from None
            except (urllib.error.URLError, OSError) as e:
                reason = getattr(e, "reason", e)
                raise self.fail(f"registry unreachable ({reason})") from None
        raise self.fail(f"too many redirects or authentication rounds for {url}")

    def _authenticate(self, header: str) -> None:
        scheme, params = _www_authenticate(header)
        if scheme == "basic":
            if self._basic is None:
                raise self.fail(
                    "the registry wants credentials (set VF_REGISTRY_USERNAME/PASSWORD)"
                )
            self._auth = self._basic
            return
        if scheme != "bearer" or "realm" not in params:
            raise self.fail(f"unsupported authentication challenge {header!r}")
        query = {"scope": params.get("scope") or f"repository:{self.ref.repository}:pull"}
        if "service" in params:
            query["service"] = params["service"]
        url = params["realm"] + ("&" if "?" in params["realm"] else "?")
        req = urllib.request.Request(url + urllib.parse.urlencode(query))
        if self._basic:
            req.add_header("Authorization", self._basic)
        try:
            with _OPENER.open(req, timeout=TIMEOUT) as r:
                body = json.loads(r.read(MAX_MANIFEST))
        except (urllib.error.URLError, OSError, ValueError) as e:
            raise self.fail(f"token request to {params['realm']} failed ({e})") from None
        token = body.get("token") or body.get("access_token")
        if not isinstance(token, str) or not token:
            raise self.fail(f"token endpoint {params['realm']} returned no token")
        self._auth = f"Bearer {token}"

    def manifest(self, reference: str) -> tuple[str, dict[str, Any], str]:
        """(media type, document, digest) of a manifest; checked against its digest when the
        reference is one, or against the registry's Docker-Content-Digest."""
        url = f"{self.base}/v2/{self.ref.repository}/manifests/{reference}"
        with self._open(url, ACCEPT) as r:
            body = r.read(MAX_MANIFEST + 1)
            media = (r.headers.get("Content-Type") or "").split(";")[0].strip()
            claimed = r.headers.get("Docker-Content-Digest")
        if len(body) > MAX_MANIFEST:
            raise self.fail(f"manifest {reference} is larger than {MAX_MANIFEST} bytes")
        digest = "sha256:" + hashlib.sha256(body).hexdigest()
        expected = reference if _DIGEST.match(reference) else claimed
        if expected and expected != digest:
            raise self.fail(f"manifest {reference}: digest {digest} does not match {expected}")
        try:
            doc = json.loads(body)
        except ValueError:
            raise self.fail(f"manifest {reference} is not JSON") from None
        return doc.get("mediaType") or media, doc, digest

    def resolve(self) -> tuple[str, dict[str, Any]]:
        """This platform's image manifest (digest, document), through an index if there is one."""
        media, doc, digest = self.manifest(self.ref.reference)
        if media in INDEX_TYPES or "manifests" in doc:
            arch = platform_arch()
            chosen = [
                m
                for m in doc.get("manifests", [])
                if (m.get("platform") or {}).get("os") == "linux"
                and (m.get("platform") or {}).get("architecture") == arch
            ]
            if not chosen:
                raise self.fail(f"no linux/{arch} image in its index")
            media, doc, digest = self.manifest(chosen[0]["digest"])
        if media not in MANIFEST_TYPES and "layers" not in doc:
            raise self.fail(f"unsupported manifest type {media!r}")
        return digest, doc

    def blob(self, digest: str, dest: Path) -> Path:
        """Download blob `digest` to `dest` (atomically, verified); kept if already there."""
        if not _DIGEST.match(digest or ""):
            raise self.fail(f"unsupported blob digest {digest!r}")
        if dest.exists():
            return dest
        part = dest.with_name(f"{dest.name}.{os.getpid()}.part")
        h = hashlib.sha256()
        try:
            with self._open(f"{self.base}/v2/{self.ref.repository}/blobs/{digest}") as r:
                with open(part, "wb") as f:
                    for chunk in _chunks(r):
                        h.update(chunk)
                        f.write(chunk)
            got = "sha256:" + h.hexdigest()
            if got != digest:
                raise self.fail(f"blob {digest} arrived with digest {got}")
            os.replace(part, dest)
        except (OSError, urllib.error.URLError) as e:
            raise self.fail(f"downloading blob {digest} failed ({e})") from None
        finally:
            part.unlink(missing_ok=True)
        return dest

    def pull(self, blobs: Path, resolved: tuple[str, dict[str, Any]] | None = None) -> Pulled:
        """Fetch the config and every layer of the manifest (`resolved`, or resolved now)
        into `blobs/`."""
        digest, doc = resolved or self.resolve()
        blobs.mkdir(parents=True, exist_ok=True)
        config_desc = doc.get("config") or {}
        config_path = self.blob(config_desc.get("digest", ""), blobs / _name(config_desc))
        try:
            config = json.loads(config_path.read_bytes())
        except ValueError:
            raise self.fail("the image config is not JSON") from None
        layers = list(doc.get("layers") or [])
        for layer in layers:
            self.blob(layer.get("digest", ""), blobs / _name(layer))
        return Pulled(digest, config, layers)


def _name(desc: dict[str, Any]) -> str:
    return str(desc.get("digest", "")).replace(":", "-")


def _chunks(stream: BinaryIO, size: int = 1 << 20) -> Iterator[bytes]:
    while chunk := stream.read(size):
        yield chunk
