"""Pulling container images over the registry HTTP API (the OCI distribution spec, as Docker
Hub and every other registry speak it): image references, the bearer-token handshake, image
indexes -> this platform's manifest -> the config and layer blobs, every digest checked.

What a registry is trusted with, and no more (issue 26):

* Every URL it hands over (a redirect, a token realm) must be http(s); a `file:`, `data:` or
  any other scheme is refused (`_http_url`), and the opener has no handler for them anyway.
* A manifest asked for by tag is checked against the digest the registry names for it
  (`Docker-Content-Digest` on the registry's own answer, a redirect included); one it names
  none for is refused. Pinned references (`name@sha256:...`) are checked against the pin.
* Every blob and manifest is read no further than the size its descriptor declares (a longer
  Content-Length is refused before the body); a layer or image declared over the unpacked caps
  (`rootfs.UnpackCaps`) is refused before it is downloaded.
* Credentials belong to one registry (`VF_REGISTRY_AUTH_HOST`) and go to it and to a token
  realm on its own origin (scheme, host and port), or Docker Hub's own realm for Docker Hub.
  A realm elsewhere is asked for an anonymous token: it still works for public images
  (as registries that delegate tokens do), and no secret leaves the registry's host.

No Docker engine is needed. Settings (environment variables, read when a pull starts):

* ``VF_REGISTRY_MIRROR``: ``host[:port]`` that serves images named without a registry (Docker
  Hub's) instead of ``registry-1.docker.io`` (a pull-through cache or a private mirror).
* ``VF_INSECURE_REGISTRIES``: comma-separated ``host[:port]`` spoken to over plain HTTP
  (``localhost``, ``127.0.0.1`` and ``[::1]`` always are).
* ``VF_REGISTRY_USERNAME`` / ``VF_REGISTRY_PASSWORD``: credentials for the token (or basic)
  authentication of the registry ``VF_REGISTRY_AUTH_HOST`` (``host[:port]`` as in image names;
  default ``docker.io``); anonymous pulls from every other registry.
"""

from __future__ import annotations

import base64
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
from typing import Any

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
MAX_CONFIG = 16 * 1024 * 1024  # an image config is read into memory
HTTP_SCHEMES = ("http", "https")
# Docker Hub names a token realm on another host than its registry: the one pair trusted
# with Docker Hub's credentials besides the registry's own origin.
DOCKER_HUB_REALM = ("https", "auth.docker.io", 443)
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


def _http_opener() -> urllib.request.OpenerDirector:
    """An opener for http(s) only, following no redirect (`Client._open` does, checking each
    URL; the token must not follow to a CDN). No file:, data: or ftp: handler exists in it."""
    opener = urllib.request.OpenerDirector()
    for handler in (
        urllib.request.ProxyHandler(),
        urllib.request.UnknownHandler(),
        urllib.request.HTTPHandler(),
        urllib.request.HTTPSHandler(),
        urllib.request.HTTPDefaultErrorHandler(),
        urllib.request.HTTPErrorProcessor(),
    ):
        opener.add_handler(handler)
    return opener


_OPENER = _http_opener()


def _origin(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of an http(s) URL, default ports filled in."""
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port or (443 if scheme == "https" else 80)
    return scheme, (parts.hostname or "").lower(), port


def _declared_size(desc: dict[str, Any]) -> int:
    size = desc.get("size")
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ValueError(f"descriptor {desc.get('digest')!r} declares no valid size ({size!r})")
    return size


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
        self._basic = _credentials_for(self.base)

    def fail(self, what: str) -> ImagePullError:
        return ImagePullError(f"cannot pull image {self.ref} from {self.base}: {what}")

    def _http_url(self, url: str, what: str) -> str:
        """`url` if it is http(s): the one check every URL a registry hands over passes."""
        try:
            parts = urllib.parse.urlsplit(url)
            parts.port  # noqa: B018 (raises on a port that is not a number in range)
        except ValueError as e:
            raise self.fail(f"{what} to an invalid URL {url[:100]!r} ({e})") from None
        scheme = parts.scheme.lower()
        if scheme not in HTTP_SCHEMES:
            raise self.fail(
                f"{what} to a {scheme or 'relative'}: URL refused (only http and https are "
                f"followed): {url[:100]}"
            )
        return url

    def _open(
        self, url: str, accept: str | None = None, auth: bool = True
    ) -> tuple[Any, str | None]:
        """The response for `url`, following redirects (http(s) only, without the token), and
        the Docker-Content-Digest that the registry's own origin named on the way."""
        named: str | None = None
        home = _origin(self.base)
        for _ in range(6):  # redirects, and one authentication round
            req = urllib.request.Request(url)
            if accept:
                req.add_header("Accept", accept)
            if auth and self._auth:
                req.add_header("Authorization", self._auth)
            try:
                resp = _OPENER.open(req, timeout=TIMEOUT)
            except urllib.error.HTTPError as e:
                if _origin(url) == home:
                    named = e.headers.get("Docker-Content-Digest") or named
                if e.code in (301, 302, 303, 307, 308) and e.headers.get("Location"):
                    url = urllib.parse.urljoin(url, e.headers["Location"])
                    self._http_url(url, "redirect")
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
            if _origin(url) == home:
                named = resp.headers.get("Docker-Content-Digest") or named
            return resp, named
        raise self.fail(f"too many redirects or authentication rounds for {url}")

    def _authenticate(self, header: str) -> None:
        scheme, params = _www_authenticate(header)
        if scheme == "basic":
            if self._basic is None:
                raise self.fail(
                    "the registry wants credentials (set VF_REGISTRY_USERNAME/PASSWORD, and "
                    "VF_REGISTRY_AUTH_HOST to this registry)"
                )
            self._auth = self._basic
            return
        if scheme != "bearer" or "realm" not in params:
            raise self.fail(f"unsupported authentication challenge {header!r}")
        realm = self._http_url(params["realm"], "token realm")
        query = {"scope": params.get("scope") or f"repository:{self.ref.repository}:pull"}
        if "service" in params:
            query["service"] = params["service"]
        url = realm + ("&" if "?" in realm else "?")
        req = urllib.request.Request(url + urllib.parse.urlencode(query))
        if self._basic and self._realm_trusted(realm):
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

    def _realm_trusted(self, realm: str) -> bool:
        """Whether the registry's credentials may go to token realm `realm`: its own origin,
        or Docker Hub's realm when speaking to Docker Hub itself (over https)."""
        home, there = _origin(self.base), _origin(realm)
        return there == home or (
            home == ("https", DOCKER_HUB_API, 443) and there == DOCKER_HUB_REALM
        )

    def _chunks(self, r: Any, limit: int, what: str) -> Iterator[bytes]:
        """The body of response `r` in chunks, refused (and read no further) once it is
        longer than `limit`; a Content-Length over it is refused before the body."""
        too_long = f"{what} is larger than its declared size of {limit} bytes"
        length = r.headers.get("Content-Length")
        if length and length.isdigit() and int(length) > limit:
            raise self.fail(too_long)
        left = limit + 1
        while left > 0 and (chunk := r.read(min(1 << 20, left))):
            left -= len(chunk)
            if left == 0:
                raise self.fail(too_long)
            yield chunk

    def manifest(self, reference: str, size: int | None = None) -> tuple[str, dict[str, Any], str]:
        """(media type, document, digest) of a manifest; checked against its digest when the
        reference is one, or against the Docker-Content-Digest the registry names for a tag.
        `size`: what its descriptor declares (the read stops there)."""
        url = f"{self.base}/v2/{self.ref.repository}/manifests/{reference}"
        resp, named = self._open(url, ACCEPT)
        with resp as r:
            limit = min(size, MAX_MANIFEST) if size is not None else MAX_MANIFEST
            body = b"".join(self._chunks(r, limit, f"manifest {reference}"))
            media = (r.headers.get("Content-Type") or "").split(";")[0].strip()
        digest = "sha256:" + hashlib.sha256(body).hexdigest()
        expected = reference if _DIGEST.match(reference) else named
        if expected is None:
            raise self.fail(
                f"the registry names no digest (Docker-Content-Digest) for tag {reference}, so "
                "its manifest cannot be checked; pull by digest (name@sha256:...)"
            )
        if expected != digest:
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
            try:
                size = _declared_size(chosen[0])
            except ValueError as e:
                raise self.fail(str(e)) from None
            media, doc, digest = self.manifest(str(chosen[0].get("digest")), size)
        if media not in MANIFEST_TYPES and "layers" not in doc:
            raise self.fail(f"unsupported manifest type {media!r}")
        return digest, doc

    def blob(self, digest: str, dest: Path, size: int) -> Path:
        """Download blob `digest` of declared `size` bytes to `dest` (atomically, verified,
        read no further than `size`); kept if already there."""
        if not _DIGEST.match(digest or ""):
            raise self.fail(f"unsupported blob digest {digest!r}")
        if dest.exists():
            return dest
        part = dest.with_name(f"{dest.name}.{os.getpid()}.part")
        h = hashlib.sha256()
        what = f"blob {digest}"
        try:
            resp, _ = self._open(f"{self.base}/v2/{self.ref.repository}/blobs/{digest}")
            with resp as r, open(part, "wb") as f:
                for chunk in self._chunks(r, size, what):
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

    def pull(
        self,
        blobs: Path,
        resolved: tuple[str, dict[str, Any]] | None = None,
        max_layer_bytes: int | None = None,
        max_image_bytes: int | None = None,
    ) -> Pulled:
        """Fetch the config and every layer of the manifest (`resolved`, or resolved now)
        into `blobs/`. A layer declared over `max_layer_bytes`, or layers over
        `max_image_bytes` together, are refused before anything is downloaded."""
        digest, doc = resolved or self.resolve()
        config_desc = doc.get("config") or {}
        layers = list(doc.get("layers") or [])
        try:
            config_size = _declared_size(config_desc)
            sizes = [_declared_size(layer) for layer in layers]
        except (ValueError, AttributeError) as e:
            raise self.fail(f"bad manifest: {e}") from None
        if config_size > MAX_CONFIG:
            raise self.fail(f"the image config declares {config_size} bytes (most: {MAX_CONFIG})")
        for layer, size in zip(layers, sizes, strict=True):
            if max_layer_bytes is not None and size > max_layer_bytes:
                raise self.fail(
                    f"layer {layer.get('digest')} declares {size} bytes, over the per-layer "
                    f"cap of {max_layer_bytes} bytes"
                )
        if max_image_bytes is not None and sum(sizes) > max_image_bytes:
            raise self.fail(
                f"the image's layers declare {sum(sizes)} bytes, over the per-image cap of "
                f"{max_image_bytes} bytes"
            )
        blobs.mkdir(parents=True, exist_ok=True)
        config_path = self.blob(
            config_desc.get("digest", ""), blobs / _name(config_desc), config_size
        )
        try:
            config = json.loads(config_path.read_bytes())
        except ValueError:
            raise self.fail("the image config is not JSON") from None
        for layer, size in zip(layers, sizes, strict=True):
            self.blob(layer.get("digest", ""), blobs / _name(layer), size)
        return Pulled(digest, config, layers)


def _credentials_for(base: str) -> str | None:
    """The Basic credentials (VF_REGISTRY_USERNAME/PASSWORD) when they are for the registry
    spoken to at `base`: the one VF_REGISTRY_AUTH_HOST names (default docker.io), compared
    as the origins they are spoken to at (so docker.io's go to its mirror when one is set)."""
    user = os.environ.get("VF_REGISTRY_USERNAME")
    if not user:
        return None
    owner = os.environ.get("VF_REGISTRY_AUTH_HOST", "").strip() or DOCKER_HUB
    if _origin(endpoint(owner)) != _origin(base):
        return None
    pair = f"{user}:{os.environ.get('VF_REGISTRY_PASSWORD', '')}".encode()
    return "Basic " + base64.b64encode(pair).decode()


def _name(desc: dict[str, Any]) -> str:
    return str(desc.get("digest", "")).replace(":", "-")
