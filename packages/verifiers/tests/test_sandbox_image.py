"""The image provider: image references, safe layer unpacking, pulls through a local registry
speaking the real protocol (token handshake, index, redirected blobs, digests), and sandboxes
run from the pulled image with the bwrap tier's isolation."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

import verifiers as vf
from verifiers.sandbox import ImageProvider, SandboxSpec, tier_of
from verifiers.sandbox.base import MiB, SandboxCreationError
from verifiers.sandbox.image import ImageStore
from verifiers.sandbox.localregistry import Layer, LocalRegistry, host_programs
from verifiers.sandbox.registry import ImagePullError, ImageRef, endpoint
from verifiers.sandbox.rootfs import LayerError, unpack_layer
from verifiers.sandbox.support import SANDBOX_UID
from verifiers.testing import free_port

PROGRAMS = ["bash", "cat", "ls", "id", "stat", "env", "grep", "touch", "rm"]
SPEC = dict(memory=256 * MiB, pids=64, disk=32 * MiB)


def unavailable() -> str | None:
    return ImageProvider.unavailable_reason()


needs_provider = pytest.mark.skipif(unavailable() is not None, reason=str(unavailable()))


@pytest.mark.parametrize(
    "name, registry, repository, tag, digest",
    [
        ("ubuntu", "docker.io", "library/ubuntu", "latest", None),
        ("namanjain12/pandas_final:abc1", "docker.io", "namanjain12/pandas_final", "abc1", None),
        ("localhost/x/y", "localhost", "x/y", "latest", None),
        ("127.0.0.1:5000/swe/img:v1", "127.0.0.1:5000", "swe/img", "v1", None),
        ("ghcr.io/o/r@sha256:" + "a" * 64, "ghcr.io", "o/r", None, "sha256:" + "a" * 64),
    ],
)
def test_image_references(name, registry, repository, tag, digest):
    ref = ImageRef.parse(name)
    assert (ref.registry, ref.repository, ref.tag, ref.digest) == (
        registry,
        repository,
        tag,
        digest,
    )


@pytest.mark.parametrize("bad", ["", " x", "UPPER/case", "x@md5:00", "a/b:bad tag"])
def test_bad_references_are_refused(bad):
    with pytest.raises(ValueError):
        ImageRef.parse(bad)


def test_registry_settings(monkeypatch):
    monkeypatch.delenv("VF_REGISTRY_MIRROR", raising=False)
    assert endpoint("docker.io") == "https://registry-1.docker.io"
    assert endpoint("127.0.0.1:5000") == "http://127.0.0.1:5000"
    assert endpoint("ghcr.io") == "https://ghcr.io"
    monkeypatch.setenv("VF_REGISTRY_MIRROR", "mirror.internal:5000")
    monkeypatch.setenv("VF_INSECURE_REGISTRIES", "mirror.internal:5000")
    assert endpoint("docker.io") == "http://mirror.internal:5000"


# -- unpacking -------------------------------------------------------------------------------
def unpack(tmp_path: Path, *layers: Layer) -> Path:
    """The image root (tmp_path/root) with `layers` unpacked onto it, lowest first."""
    root = tmp_path / "root"
    root.mkdir()
    for i, layer in enumerate(layers):
        blob = tmp_path / f"layer{i}.tar.gz"
        blob.write_bytes(layer.tar_gz())
        unpack_layer(root, blob, uid=os.getuid(), gid=os.getgid())
    return root


def test_whiteouts_and_opaque_directories(tmp_path):
    base = (
        Layer()
        .dir("etc")
        .file("etc/keep", "1")
        .file("etc/gone", "2")
        .dir("opt")
        .file("opt/old", "3")
        .dir("opt/sub")
        .file("opt/sub/x", "4")
    )
    top = Layer().whiteout("etc/gone").file("opt/new", "5").opaque("opt").file("opt/later", "6")
    root = unpack(tmp_path, base, top)
    assert sorted(p.name for p in (root / "etc").iterdir()) == ["keep"]
    # the opaque marker hides the lower layers' entries only, not this layer's own
    assert sorted(p.name for p in (root / "opt").iterdir()) == ["later", "new"]


def test_modes_links_and_devices(tmp_path):
    layer = (
        Layer()
        .dir("usr/bin")
        .file("usr/bin/tool", "#!/bin/sh\n", 0o4755)
        .hardlink("usr/bin/tool2", "usr/bin/tool")
        .symlink("bin", "usr/bin")
        .file("bin/via-link", "x")  # written through the image's own symlink
        .device("dev-null")
        .dir("tmp", 0o1777)
    )
    root = unpack(tmp_path, layer)
    assert (root / "usr/bin/tool").stat().st_mode & 0o7777 == 0o755  # set-uid dropped
    assert (root / "usr/bin/tool2").stat().st_ino == (root / "usr/bin/tool").stat().st_ino
    assert (root / "usr/bin/via-link").read_text() == "x"
    assert not (root / "dev-null").exists()
    assert (root / "tmp").stat().st_mode & 0o7777 == 0o1777


@pytest.mark.parametrize(
    "layer, why",
    [
        (Layer().file("../escape", "x"), "'..'"),
        (Layer().file("/etc/abs", "x"), "absolute"),
        (Layer().hardlink("h", "../../etc/passwd"), "'..'"),
        (Layer().symlink("s", "/etc/passwd").hardlink("h", "s"), "not a regular file"),
    ],
)
def test_escaping_entries_are_refused(tmp_path, layer, why):
    with pytest.raises(LayerError, match=why):
        unpack(tmp_path, layer)
    assert not (tmp_path / "escape").exists()


def test_symlinks_resolve_inside_the_root(tmp_path):
    """A symlink to `/` (or `../..`) followed by a write lands in the image, never on the host."""
    outside = tmp_path / "outside"
    outside.mkdir()
    layer = (
        Layer()
        .symlink("up", "../../outside")
        .file("up/planted", "x")
        .symlink("abs", str(outside))
        .file("abs/planted2", "y")
    )
    root = unpack(tmp_path, layer)
    assert list(outside.iterdir()) == []
    assert (root / "outside/planted").read_text() == "x"
    assert (root / outside.relative_to("/") / "planted2").read_text() == "y"


# -- pulling and running ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def base_layer() -> Layer:
    return host_programs(PROGRAMS)


@pytest.fixture
def store():
    d = Path(tempfile.mkdtemp(prefix="vf-img-"))
    os.chmod(d, 0o755)  # the sandbox uid reaches the stage mount point below it
    yield ImageStore(d / "images")
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def registry():
    with LocalRegistry() as reg:
        yield reg


def app_layer() -> Layer:
    return (
        Layer()
        .dir("testbed")
        .file("testbed/hello.txt", "from the image\n")
        .dir("r2e_tests")
        .file("r2e_tests/test_a.py", "def test_a(): pass\n")
        .file("etc/os-release", 'ID=vftest\nPRETTY_NAME="vf test image"\n')
    )


@needs_provider
async def test_pull_and_run(registry, store, base_layer, monkeypatch):
    monkeypatch.setenv("HOST_SECRET_IMG", "s3cr3t-value")
    digest = registry.add_image("vf/app", "v1", [base_layer, app_layer()])
    name = f"{registry.host}/vf/app:v1"
    provider = ImageProvider(store=store)
    assert tier_of(provider).name == "image"
    spec = SandboxSpec(image=name, workdir="/testbed", **SPEC)
    try:
        async with await provider.create(spec) as box:
            assert box.image.digest == digest
            r = await box.exec("cat hello.txt /etc/os-release && id -u && pwd")
            assert r.exit_code == 0, r
            assert r.stdout.splitlines()[0] == "from the image"
            assert "vftest" in r.stdout and r.stdout.splitlines()[-2:] == ["1000", "/testbed"]
            # the image's files are the sandbox's to change (in its own writable layer)
            r = await box.exec("echo changed > hello.txt && rm -r /r2e_tests && touch /new")
            assert r.exit_code == 0, r
            assert await box.read_file("/testbed/hello.txt") == b"changed\n"
            # no host environment, no host path in the mount table, no network
            r = await box.exec("env; cat /proc/self/mountinfo")
            assert "s3cr3t-value" not in r.stdout and str(store.root) not in r.stdout
            assert "lowerdir=/proc/self/fd/" in r.stdout
            r = await box.exec(["cat", "/proc/net/dev"])
            assert [ln.split(":")[0].strip() for ln in r.stdout.splitlines()[2:]] == ["lo"]
        async with await provider.create(spec) as other:  # nothing carries over
            r = await other.exec("cat hello.txt; ls /r2e_tests; ls /new")
            assert r.stdout.startswith("from the image\ntest_a.py\n"), r
            assert r.exit_code != 0  # /new is gone
        rootfs = store.get(name).rootfs
        assert (rootfs / "testbed/hello.txt").read_text() == "from the image\n"
        assert (rootfs / "testbed/hello.txt").stat().st_uid == SANDBOX_UID
    finally:
        await provider.close()
    # the token handshake happened and blobs came through the redirect, without the token
    assert registry.requests[1].startswith("/token?")  # after the first request's 401
    assert registry.tokens
    assert any(p.startswith("/storage/sha256:") for p in registry.requests)
    # pulled once: the second sandbox and the store lookup used the cache
    assert sum(p.startswith("/storage/") for p in registry.requests) == 3  # config + 2 layers


@needs_provider
async def test_pull_is_cached_across_providers(registry, store, base_layer):
    registry.add_image("vf/app", "v1", [base_layer, app_layer()], index=False)
    name = f"{registry.host}/vf/app:v1"
    for _ in range(2):
        provider = ImageProvider(store=ImageStore(store.root))
        try:
            async with await provider.create(SandboxSpec(image=name, **SPEC)) as box:
                assert (await box.exec("cat /testbed/hello.txt")).stdout == "from the image\n"
        finally:
            await provider.close()
    assert sum(p.startswith("/storage/") for p in registry.requests) == 3
    assert sum("/manifests/" in p for p in registry.requests) >= 2  # the tag is resolved again


@needs_provider
async def test_network_only_when_asked_for(registry, store, base_layer):
    """bash's /dev/tcp to the registry (on the host's loopback): cut by default, reachable with
    network=True (the host's network namespace, as the bwrap tier)."""
    registry.add_image("vf/app", "v1", [base_layer, app_layer()])
    name = f"{registry.host}/vf/app:v1"
    host, port = registry.host.split(":")
    probe = f"exec 3<>/dev/tcp/{host}/{port} && echo connected"
    provider = ImageProvider(store=store)
    try:
        async with await provider.create(SandboxSpec(image=name, **SPEC)) as box:
            r = await box.exec(probe, timeout=20)
            assert r.exit_code != 0 and "connected" not in r.stdout
        async with await provider.create(SandboxSpec(image=name, network=True, **SPEC)) as box:
            r = await box.exec(probe, timeout=20)
            assert r.exit_code == 0 and r.stdout == "connected\n", r
    finally:
        await provider.close()


def test_a_pull_in_one_event_loop_serves_the_next(registry, store, base_layer):
    """A trainer runs each step in a fresh `asyncio.run`: the second loop reuses the image."""
    if unavailable():
        pytest.skip(str(unavailable()))
    registry.add_image("vf/app", "v1", [base_layer, app_layer()])
    name = f"{registry.host}/vf/app:v1"
    provider = ImageProvider(store=store)

    async def step():
        async with await provider.create(SandboxSpec(image=name, **SPEC)) as box:
            return (await box.exec("cat /testbed/hello.txt")).stdout

    try:
        assert asyncio.run(step()) == asyncio.run(step()) == "from the image\n"
    finally:
        asyncio.run(provider.close())
    assert sum("/manifests/" in p for p in registry.requests) == 3, (
        registry.requests
    )  # 401, index, manifest: once


@needs_provider
async def test_image_links_never_lead_to_host_files(registry, store, base_layer):
    """bwrap writes /etc files and creates mount points while the host's root is still
    reachable: an image's links there are dropped (files) or refused (directories)."""
    links = (
        Layer()
        .dir("etc")
        .symlink("etc/passwd", "/etc/shadow")
        .symlink("etc/hosts", "../../../../oldroot/etc/hosts")
    )
    registry.add_image("vf/links", "v1", [base_layer, links])
    bad_tmp = Layer().symlink("tmp", "/oldroot/tmp")
    registry.add_image("vf/badtmp", "v1", [base_layer, bad_tmp])
    provider = ImageProvider(store=store)
    try:
        spec = SandboxSpec(image=f"{registry.host}/vf/links:v1", **SPEC)
        async with await provider.create(spec) as box:
            r = await box.exec("cat /etc/passwd /etc/hosts")
            assert r.stdout.startswith("sandbox:x:1000:1000::/workspace:/bin/sh\n127.0.0.1"), r
        with pytest.raises(SandboxCreationError, match="/tmp is a symbolic link"):
            await provider.create(SandboxSpec(image=f"{registry.host}/vf/badtmp:v1", **SPEC))
    finally:
        await provider.close()


@needs_provider
async def test_pull_failures_are_infra_errors_naming_image_and_registry(
    registry, store, base_layer
):
    provider = ImageProvider(store=store)
    try:
        unreachable = f"127.0.0.1:{free_port()}/vf/app:v1"
        with pytest.raises(ImagePullError) as e:
            await provider.create(SandboxSpec(image=unreachable, **SPEC))
        assert isinstance(e.value, vf.SandboxError) and isinstance(e.value, vf.InfraError)
        assert unreachable.split("/")[0] in str(e.value) and "vf/app" in str(e.value)
        assert "unreachable" in str(e.value)

        with pytest.raises(ImagePullError, match="HTTP 404"):
            await provider.create(SandboxSpec(image=f"{registry.host}/vf/none:v1", **SPEC))

        registry.add_image("vf/bad", "v1", [base_layer, app_layer()])
        registry.corrupt.add(registry.manifests[("vf/bad", "v1")])
        with pytest.raises(ImagePullError, match="does not match"):
            await provider.create(SandboxSpec(image=f"{registry.host}/vf/bad:v1", **SPEC))
        registry.corrupt.clear()
        layer_digest = json.loads(registry.blobs[registry.add_image("vf/bad2", "v1", [base_layer, Layer().file("x", "1")])].data)["layers"][1]["digest"]  # fmt: skip
        registry.corrupt.add(layer_digest)
        with pytest.raises(ImagePullError, match="arrived with digest"):
            await provider.create(SandboxSpec(image=f"{registry.host}/vf/bad2:v1", **SPEC))
        evil = Layer().file("../../escape", "x")
        registry.add_image("vf/evil", "v1", [base_layer, evil])
        with pytest.raises(ImagePullError, match="'..'"):
            await provider.create(SandboxSpec(image=f"{registry.host}/vf/evil:v1", **SPEC))

        class Garbage(Layer):
            def tar_gz(self, level: int = 1) -> bytes:
                return b"\x1f\x8b\x08\x00not a gzip stream at all"

        registry.add_image("vf/garbage", "v1", [base_layer, Garbage()])
        with pytest.raises(ImagePullError, match="layer sha256:"):
            await provider.create(SandboxSpec(image=f"{registry.host}/vf/garbage:v1", **SPEC))
        assert not list((store.root / "rootfs").glob("*.tmp-*"))  # nothing half-built kept
        assert not list((store.root / "rootfs").glob("*.blobs-*"))
    finally:
        await provider.close()
