"""A hostile registry on loopback against the image tier's pulls (issue 26, "Image unpacking
trusts whiteout names" and "The registry client follows any redirect scheme and trusts declared
sizes"): every attack goes through `ImageProvider.image` (what `create` pulls with) against a
real `LocalRegistry` whose answers the test replaces where the attack needs it. Pulling and
unpacking need no sandbox, so these run wherever the package does.

Each test checks what the attack reached, not only the error: the files of the store outside
the attacked image, whether a host file was read (its access time), how many bytes the
registry got to send and how many the pull wrote."""

from __future__ import annotations

import base64
import gzip
import io
import json
import os
import tarfile
import threading
from pathlib import Path
from typing import Any

import pytest

from verifiers.sandbox import ImageProvider
from verifiers.sandbox.image import ImageStore
from verifiers.sandbox.localregistry import OCI_MANIFEST, Layer, LocalRegistry, digest_of
from verifiers.sandbox.localregistry import send_reply as send
from verifiers.sandbox.registry import ImagePullError

MiB = 1 << 20
REPO = "vf/evil"


@pytest.fixture
def registry():
    with LocalRegistry() as reg:
        yield reg


@pytest.fixture
def other_server():
    """A second server on loopback (another host as far as origins go: another port)."""
    with LocalRegistry(auth=False) as reg:
        yield reg


def make_store(tmp_path: Path, **caps: int) -> ImageStore:
    return ImageStore(tmp_path / "images", uid=os.getuid(), **caps)


async def pull(store: ImageStore, name: str):
    provider = ImageProvider(store=store)
    try:
        return await provider.image(name)
    finally:
        await provider.close()


def tree(root: Path) -> dict[str, bytes | None]:
    """Every path under `root` with its content (None for directories and links)."""
    out: dict[str, bytes | None] = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        out[rel] = p.read_bytes() if p.is_file() and not p.is_symlink() else None
    return out


def manifest_of(registry: LocalRegistry, repo: str, tag: str) -> dict[str, Any]:
    return json.loads(registry.blobs[registry.manifests[(repo, tag)]].data)


def layer_path(registry: LocalRegistry, repo: str, tag: str, i: int = -1) -> tuple[str, str]:
    """(digest, URL path) of a published image's layer `i`."""
    digest = manifest_of(registry, repo, tag)["layers"][i]["digest"]
    return digest, f"/v2/{repo}/blobs/{digest}"


# -- whiteouts -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "entries",
    [
        [".wh..."],  # removes '..' of the image: the store's rootfs/ (every cached image)
        [".wh.."],  # '.': the image's own root
        [".wh."],  # '': the same
        ["sub/", "sub/.wh..."],  # the image's root, from below
        ["up->/", "up/.wh..."],  # through the image's own link to its root
    ],
)
async def test_whiteouts_cannot_remove_anything_outside_the_image(tmp_path, registry, entries):
    """Issue 26: a whiteout whose target is `..` (`.wh...`) removed the parent of the unpack
    directory, i.e. every cached image. A whiteout's target is a path confined like any other
    entry: the layer is refused and nothing outside the image changes."""
    store = make_store(tmp_path)
    registry.add_image("vf/good", "v1", [Layer().dir("app").file("app/keep", "cached")])
    good = await pull(store, f"{registry.host}/vf/good:v1")
    (tmp_path / "beside-the-store").write_text("x")
    before = tree(tmp_path)

    layer = Layer().dir("etc").file("etc/x", "1")
    for e in entries:
        if e.endswith("/"):
            layer.dir(e.rstrip("/"))
        elif "->" in e:
            link, target = e.split("->")
            layer.symlink(link, target)
        else:
            layer.file(e, b"")  # the whiteout marker, named as given
    registry.add_image(REPO, "v1", [layer])
    with pytest.raises(ImagePullError, match="a whiteout of"):
        await pull(store, f"{registry.host}/{REPO}:v1")

    after = tree(tmp_path)
    added = set(after) - set(before)
    assert set(before) <= set(after), sorted(set(before) - set(after))
    assert all(p.endswith(".lock") for p in added), added  # the failed image's lock only
    assert {p: after[p] for p in before} == before
    assert (good.rootfs / "app/keep").read_text() == "cached"


async def test_ordinary_whiteouts_still_apply(tmp_path, registry):
    """The confinement refuses only targets that are not a name: `.wh.NAME` and the opaque
    marker work as the OCI spec says (positive control for the test above)."""
    store = make_store(tmp_path)
    base = Layer().dir("etc").file("etc/gone", "1").file("etc/keep", "2").dir("opt")
    top = Layer().whiteout("etc/gone").file("opt/old", "3").opaque("opt").file("opt/new", "4")
    registry.add_image("vf/ok", "v1", [base, Layer().dir("opt").file("opt/lower", "5"), top])
    image = await pull(store, f"{registry.host}/vf/ok:v1")
    assert sorted(p.name for p in (image.rootfs / "etc").iterdir()) == ["keep"]
    assert sorted(p.name for p in (image.rootfs / "opt").iterdir()) == ["new", "old"]


# -- redirect schemes ------------------------------------------------------------------------
def atime_tracked(tmp_path: Path) -> bool:
    probe = tmp_path / "atime-probe"
    probe.write_text("x")
    os.utime(probe, (0, probe.stat().st_mtime))
    probe.read_text()
    return probe.stat().st_atime != 0


@pytest.mark.parametrize("scheme", ["file", "data"])
@pytest.mark.parametrize("what", ["blob", "manifest-by-tag", "token-realm"])
async def test_only_http_redirects_are_followed(tmp_path, registry, scheme, what):
    """Issue 26: a `file://` redirect made the client read a host file as a blob (its digest
    checked out, since the registry knew the file), and a manifest fetched by tag through one
    was accepted unchecked. Any URL the registry hands over (a redirect, a token realm) must be
    http(s): the pull fails naming the scheme and the host file is never opened."""
    store = make_store(tmp_path)
    host_file = tmp_path / "host-secret.tar.gz"
    planted = Layer().file("from-the-host", "host file content")
    registry.add_image(REPO, "v1", [Layer().file("a", "1"), planted], index=False)
    manifest = registry.blobs[registry.manifests[(REPO, "v1")]].data
    digest, path = layer_path(registry, REPO, "v1")
    if what == "blob":
        content = registry.blobs[digest].data
    elif what == "manifest-by-tag":
        content, path = manifest, f"/v2/{REPO}/manifests/v1"
    else:
        content, path = json.dumps({"token": "t"}).encode(), f"/v2/{REPO}/manifests/v1"
    host_file.write_bytes(content)
    os.utime(host_file, (0, host_file.stat().st_mtime))
    url = (
        f"file://{host_file}"
        if scheme == "file"
        else "data:application/octet-stream;base64," + base64.b64encode(content).decode()
    )
    if what == "token-realm":
        challenge = {"WWW-Authenticate": f'Bearer realm="{url}",service="x"'}
        registry.routes[path] = lambda h: send(h, 401, b"{}", challenge)
    else:
        headers = {"Location": url, "Docker-Content-Digest": digest_of(content)}
        registry.routes[path] = lambda h: send(h, 307, b"", headers)

    with pytest.raises(ImagePullError, match=f"{scheme}: URL refused"):
        await pull(store, f"{registry.host}/{REPO}:v1")
    assert not list((store.root / "rootfs").glob("*/from-the-host"))
    if atime_tracked(tmp_path):
        assert host_file.stat().st_atime == 0  # never opened


@pytest.mark.parametrize("named", ["none", "wrong", "right"])
async def test_a_manifest_by_tag_is_checked_against_the_digest_the_registry_names(
    tmp_path, registry, other_server, named
):
    """Issue 26: a manifest fetched by tag through a redirect was accepted with no digest
    check. The registry itself must name the digest (Docker-Content-Digest on its own answer);
    what arrives from elsewhere is checked against it, and refused when it names none."""
    store = make_store(tmp_path)
    registry.add_image(REPO, "v1", [Layer().file("real", "1")], index=False)
    registry.add_image(REPO, "forged", [Layer().file("forged", "1")], index=False)
    real = registry.manifests[(REPO, "v1")]
    forged = registry.manifests[(REPO, "forged")]
    other_server.blobs[forged] = registry.blobs[forged]  # what the other host serves
    served = forged if named != "right" else real
    other_server.blobs[real] = registry.blobs[real]
    headers = {"Location": f"http://{other_server.host}/storage/{served}"}
    if named != "none":
        headers["Docker-Content-Digest"] = real if named == "wrong" else served
    registry.routes[f"/v2/{REPO}/manifests/v1"] = lambda h: send(h, 307, b"", headers)
    name = f"{registry.host}/{REPO}:v1"
    if named == "right":
        image = await pull(store, name)
        assert image.digest == real and (image.rootfs / "real").exists()
        return
    with pytest.raises(ImagePullError, match="names no digest" if named == "none" else "match"):
        await pull(store, name)
    assert not list((store.root / "rootfs").glob("*/forged"))


async def test_a_manifest_by_tag_without_a_named_digest_is_refused(tmp_path, registry):
    """Without Docker-Content-Digest nothing says which manifest the tag names (every major
    registry sends it; a pin by digest, `name@sha256:...`, needs none)."""
    store = make_store(tmp_path)
    registry.add_image(REPO, "v1", [Layer().file("a", "1")], index=False)
    digest = registry.manifests[(REPO, "v1")]
    body = registry.blobs[digest].data
    registry.routes[f"/v2/{REPO}/manifests/v1"] = lambda h: send(
        h, 200, body, {"Content-Type": OCI_MANIFEST}
    )
    with pytest.raises(ImagePullError, match="names no digest"):
        await pull(store, f"{registry.host}/{REPO}:v1")
    image = await pull(store, f"{registry.host}/{REPO}@{digest}")  # a pin needs no header
    assert (image.rootfs / "a").exists()


# -- declared sizes --------------------------------------------------------------------------
class Liar:
    """Answers a blob request with `total` bytes whatever was declared, counting what it got
    to send before the client hung up."""

    def __init__(self, total: int, content_length: bool) -> None:
        self.total, self.content_length, self.sent = total, content_length, 0
        self.done = threading.Event()

    def __call__(self, h: Any) -> None:
        try:
            h.send_response(200)
            if self.content_length:
                h.send_header("Content-Length", str(self.total))
            else:
                h.send_header("Connection", "close")
                h.close_connection = True
            h.end_headers()
            chunk = bytes(64 * 1024)
            while self.sent < self.total:
                h.wfile.write(chunk)
                self.sent += len(chunk)
        except OSError:
            pass  # the client hung up
        finally:
            self.done.set()


@pytest.mark.parametrize("content_length", [True, False])
async def test_a_blob_is_read_no_further_than_its_declared_size(tmp_path, registry, content_length):
    """Issue 26: a blob declared as 1 KiB was read in full (192 MiB) before its digest check
    failed. The declared size bounds the download while it streams (and a Content-Length over
    it is refused before the body): the registry gets to send little more than the socket
    buffers hold, and nothing is kept."""
    store = make_store(tmp_path)
    registry.add_image(REPO, "v1", [os.urandom(1024)], index=False)
    digest, _ = layer_path(registry, REPO, "v1")
    liar = Liar(64 * MiB, content_length)
    registry.routes[f"/storage/{digest}"] = liar
    with pytest.raises(ImagePullError, match="larger than its declared size"):
        await pull(store, f"{registry.host}/{REPO}:v1")
    assert liar.done.wait(30)
    assert liar.sent < 16 * MiB, liar.sent  # of 64 MiB offered
    assert not list((store.root / "rootfs").iterdir()) or all(
        p.suffix == ".lock" for p in (store.root / "rootfs").iterdir()
    )


async def test_a_declared_size_over_the_caps_is_refused_before_downloading(tmp_path, registry):
    """A registry may also declare a huge layer honestly: a blob whose declared size is over
    the unpacked caps (it could not be unpacked anyway) is refused without being requested."""
    store = make_store(tmp_path, max_layer_bytes=4 * MiB, max_image_bytes=8 * MiB)
    registry.add_image(REPO, "v1", [os.urandom(1024)], index=False)
    manifest = manifest_of(registry, REPO, "v1")
    manifest["layers"][0]["size"] = 5 * MiB
    registry.manifests[(REPO, "v1")] = registry.put(json.dumps(manifest).encode(), OCI_MANIFEST)
    with pytest.raises(ImagePullError, match="over the per-layer cap"):
        await pull(store, f"{registry.host}/{REPO}:v1")
    blob_requests = [p for p in registry.requests if manifest["layers"][0]["digest"] in p]
    assert blob_requests == []


# -- unpacked caps ---------------------------------------------------------------------------
def gzip_bomb(total: int) -> bytes:
    """A gzip'd tar holding one file of `total` zero bytes, as concatenated gzip members (one
    MiB of zeros compresses to about 1 KiB): 512 MiB in ~510 KiB, built in milliseconds."""
    info = tarfile.TarInfo("bomb")
    info.size, info.mode = total, 0o644
    one_mib = gzip.compress(bytes(MiB), 9)
    return gzip.compress(info.tobuf()) + one_mib * (total // MiB) + gzip.compress(bytes(1024))


def sparse_bomb(total: int) -> bytes:
    """A ~10 KiB tar whose one file is a GNU sparse file (PAX 1.0) of `total` bytes: small as
    a stream, huge once written out."""
    info = tarfile.TarInfo("GNUSparseFile.0/bomb")
    info.size, info.mode = 1024, 0o644
    info.pax_headers = {"GNU.sparse.major": "1", "GNU.sparse.minor": "0",
                        "GNU.sparse.name": "bomb", "GNU.sparse.realsize": str(total)}  # fmt: skip
    sparse_map = f"1\n{total - 512}\n512\n".encode().ljust(512, b"\0")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        tar.addfile(info, io.BytesIO(sparse_map + b"x" * 512))
    return buf.getvalue()


def written_bytes() -> int:
    """Bytes this process has passed to write(2) so far (all threads)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    raise AssertionError("no wchar in /proc/self/io")


@pytest.mark.parametrize(
    "layers, which",
    [
        (lambda: [gzip_bomb(512 * MiB)], "layer"),  # 509 KiB of gzip
        (lambda: [sparse_bomb(512 * MiB)], "layer"),  # 10 KiB of tar
        (lambda: [Layer().file(f"f{i}", bytes(3 * MiB)) for i in range(3)], "image"),
    ],
    ids=["gzip-bomb", "sparse-bomb", "many-layers"],
)
async def test_unpacking_stops_at_the_caps(tmp_path, registry, layers, which):
    """Issue 26: layers had no decompressed-size cap (509 KiB of gzip became 512 MiB on
    disk). Unpacking stops once a layer's tar stream or written files pass the per-layer cap,
    or the image's pass the per-image cap: measured as bytes written by this process, which
    stay near the cap instead of the bomb's size, and nothing of the image is kept."""
    store = make_store(tmp_path, max_layer_bytes=4 * MiB, max_image_bytes=8 * MiB)
    registry.add_image(REPO, "v1", layers(), index=False)
    start = written_bytes()
    with pytest.raises(ImagePullError, match=f"past the per-{which} cap"):
        await pull(store, f"{registry.host}/{REPO}:v1")
    assert written_bytes() - start < 32 * MiB
    assert [p.name for p in (store.root / "rootfs").iterdir() if p.suffix != ".lock"] == []


# -- credentials -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "realm, creds_for, realm_gets_creds",
    [
        ("other-host", "registry", False),  # Docker Hub-style realm elsewhere: anonymous token
        ("same-host", "registry", True),  # positive control
        ("same-host", "other-host", False),  # credentials of another registry
    ],
)
async def test_credentials_reach_only_the_registry_they_are_for(
    tmp_path, monkeypatch, other_server, realm, creds_for, realm_gets_creds
):
    """Issue 26: registry credentials were global, and sent to a token realm on another host
    than the registry that named it. They are scoped to one registry (`VF_REGISTRY_AUTH_HOST`)
    and sent to its token realm only when that is on the same origin; a realm elsewhere is
    asked for an anonymous token."""
    token_server = other_server if realm == "other-host" else None
    with LocalRegistry(token_server=token_server) as registry:
        registry.add_image("vf/app", "v1", [Layer().file("a", "1")])
        host = registry.host if creds_for == "registry" else other_server.host
        monkeypatch.setenv("VF_REGISTRY_AUTH_HOST", host)
        monkeypatch.setenv("VF_REGISTRY_USERNAME", "alice")
        monkeypatch.setenv("VF_REGISTRY_PASSWORD", "pa55word")
        image = await pull(make_store(tmp_path), f"{registry.host}/vf/app:v1")
        assert (image.rootfs / "a").exists()
        seen = registry.authorizations + other_server.authorizations
    basic = "Basic " + base64.b64encode(b"alice:pa55word").decode()
    to_realm = [auth for path, auth in seen if path.startswith("/token")]
    assert to_realm, seen
    assert all((auth == basic) == realm_gets_creds for auth in to_realm), to_realm
    # the registry itself only ever sees its bearer token; storage sees nothing
    assert all(auth != basic for path, auth in seen if not path.startswith("/token"))
    assert all(auth is None for path, auth in seen if path.startswith("/storage/"))


@pytest.mark.parametrize("creds_for", ["registry", "other-host"])
async def test_basic_credentials_go_to_their_registry_only(
    tmp_path, monkeypatch, other_server, creds_for
):
    """A registry asking for Basic authentication gets the credentials only when they are
    for it; otherwise the pull fails saying which setting is missing."""
    with LocalRegistry(auth=False) as registry:
        await basic_registry_pull(tmp_path, monkeypatch, registry, other_server, creds_for)


async def basic_registry_pull(tmp_path, monkeypatch, registry, other_server, creds_for):
    registry.add_image(REPO, "v1", [Layer().file("a", "1")], index=False)
    digest = registry.manifests[(REPO, "v1")]
    body = registry.blobs[digest].data

    def basic_only(h: Any) -> None:
        if not (h.headers.get("Authorization") or "").startswith("Basic "):
            return send(h, 401, b"{}", {"WWW-Authenticate": 'Basic realm="r"'})
        send(h, 200, body, {"Content-Type": OCI_MANIFEST, "Docker-Content-Digest": digest})

    registry.routes[f"/v2/{REPO}/manifests/v1"] = basic_only
    host = registry.host if creds_for == "registry" else other_server.host
    monkeypatch.setenv("VF_REGISTRY_AUTH_HOST", host)
    monkeypatch.setenv("VF_REGISTRY_USERNAME", "alice")
    monkeypatch.setenv("VF_REGISTRY_PASSWORD", "pa55word")
    name = f"{registry.host}/{REPO}:v1"
    if creds_for == "registry":
        assert ((await pull(make_store(tmp_path), name)).rootfs / "a").exists()
        return
    with pytest.raises(ImagePullError, match="VF_REGISTRY_AUTH_HOST"):
        await pull(make_store(tmp_path), name)
    assert all(auth is None for _, auth in registry.authorizations)
