"""Nothing an interrupted or lost upload leaves behind survives ``prime-hub admin gc``.

A real server process is killed with SIGKILL in the middle of receiving a body (the upload
spool) and in the middle of writing a blob to the store (a local ``.partial`` file, or an S3
multipart upload); after a restart and one gc run nothing is left, on both deployments. The
losers of a concurrent push delete their own blobs before they answer.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import boto3
import httpx
import pytest
from prime_hub_testkit import make_sdist, make_wheel, publish
from sqlalchemy import select

from prime_hub.db.models import File
from prime_hub.errors import Conflict
from verifiers.testing import free_port, wait_listening


def _serve(server, **overrides: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**os.environ, **server.env, **overrides}
    proc = subprocess.Popen(
        [sys.executable, "-m", "prime_hub.cli", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_listening(port, proc, timeout=30)
    return proc, f"http://127.0.0.1:{port}"


def _kill(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    assert proc.returncode == -signal.SIGKILL


def _gc(server) -> str:
    r = subprocess.run(
        [sys.executable, "-m", "prime_hub.cli", "admin", "gc", "--grace-minutes", "0"],
        env={**os.environ, **server.env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


def _s3(server):  # the bucket as the hub sees it (through the test's proxy)
    return boto3.client(
        "s3",
        endpoint_url=server.env["PRIME_HUB_S3_ENDPOINT_URL"],
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


def partial_writes(server) -> list[str]:
    """Store writes that have begun and not finished (cheap enough to poll)."""
    if server.s3_proxy is not None:
        ups = _s3(server).list_multipart_uploads(Bucket=server.settings.s3_bucket)
        return [u["Key"] for u in ups.get("Uploads", [])]
    store = server.settings.resolved_artifact_dir
    found = os.listdir(store / ".partial") if (store / ".partial").is_dir() else []
    return found + [str(p) for p in (store / "blobs").rglob(".tmp-*")]


def leftovers(server) -> dict[str, list[str]]:
    """Everything an unfinished upload can leave: spool entries, partial store writes and
    stored blobs that no published file references."""
    data = Path(server.settings.data_dir)
    spool = [
        f"{area}/{p.name}"
        for area in ("spool", "tmp")
        if (data / area).is_dir()
        for p in (data / area).iterdir()
    ]
    partial = partial_writes(server)
    with server.hub.db.reader() as s:
        referenced = set(s.scalars(select(File.storage_key)))
    blobs = [k for k, _ in server.hub.storage.list_keys("blobs/") if k not in referenced]
    return {"spool": spool, "partial": partial, "unreferenced": blobs}


NOTHING = {"spool": [], "partial": [], "unreferenced": []}


def test_killed_mid_body_then_restart_then_gc_leaves_nothing(server, user, uid):
    owner, token = user
    fn, wheel = make_wheel(uid, "1.0.0", extra_members={"blob.bin": os.urandom(2 << 20)})
    boundary = uuid.uuid4().hex
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="{fn}"\r\n\r\n'
    ).encode() + wheel
    data = Path(server.settings.data_dir)
    proc, url = _serve(server)
    half = threading.Event()

    def slow() -> object:  # half the body, then hold the connection open
        for i in range(0, len(body), 64 * 1024):
            if i > len(body) // 2:
                half.set()
                time.sleep(0.2)
            yield body[i : i + 64 * 1024]

    def spooled() -> int:
        return sum(p.stat().st_size for p in (data / "spool").rglob("*.part"))

    def killer() -> None:  # once the server has part of the body on disk, not all of it
        half.wait(30)
        deadline = time.monotonic() + 30
        while spooled() == 0 and time.monotonic() < deadline:
            time.sleep(0.005)
        _kill(proc)

    t = threading.Thread(target=killer)
    t.start()
    answer = None
    try:
        with httpx.Client(timeout=30) as c:
            answer = c.post(
                f"{url}/api/v1/environments/{owner}/{uid}/versions",
                content=slow(),
                headers={
                    "Authorization": f"Bearer {token}",
                    "Content-Type": f"multipart/form-data; boundary={boundary}",
                },
            )
    except httpx.TransportError:
        pass
    finally:
        t.join()
    left = leftovers(server)
    assert answer is None, f"the server answered before it was killed: {answer.text}"
    assert left["spool"], "the killed server left no spool file: the test did not bite"
    proc, url = _serve(server)  # a restart alone does not clean up
    try:
        assert httpx.get(f"{url}/health", timeout=10).status_code == 200
    finally:
        proc.terminate()
        proc.wait(10)
    assert leftovers(server)["spool"] == left["spool"]
    _gc(server)
    assert leftovers(server) == NOTHING


def test_killed_mid_store_write_then_gc_leaves_nothing(server, user, uid):
    """The kill lands while the blob is being written to the store: a local temp file or
    an S3 multipart upload (boto3 splits anything over 8 MB into parts)."""
    owner, token = user
    fn, wheel = make_wheel(uid, "1.0.0", extra_members={"blob.bin": os.urandom(40 << 20)})
    big = {
        "PRIME_HUB_MAX_UPLOAD_BYTES": str(64 << 20),
        "PRIME_HUB_MAX_UNCOMPRESSED_BYTES": str(1 << 30),
    }
    proc, url = _serve(server, **big)

    def push() -> None:
        try:
            httpx.post(
                f"{url}/api/v1/environments/{owner}/{uid}/versions",
                files=[("files", (fn, wheel))],
                headers={"Authorization": f"Bearer {token}"},
                timeout=120,
            )
        except httpx.TransportError:
            pass

    t = threading.Thread(target=push)
    t.start()
    seen: list[str] = []
    while t.is_alive() and not seen:
        seen = partial_writes(server)
    if seen:
        _kill(proc)
    else:
        proc.terminate()
    t.join(60)
    proc.wait(10)
    assert seen, "the publish finished before a partial write was seen: the test did not bite"
    assert partial_writes(server)
    proc, url = _serve(server, **big)
    try:
        assert httpx.get(f"{url}/health", timeout=10).status_code == 200
    finally:
        proc.terminate()
        proc.wait(10)
    _gc(server)
    assert leftovers(server) == NOTHING


def test_losers_of_a_concurrent_push_leave_no_blobs(server, user, uid):
    owner, token = user
    contenders = [make_wheel(uid, "1.0.0", body=f"WHO = {i}\n") for i in range(4)]
    with ThreadPoolExecutor(len(contenders)) as pool:
        codes = list(
            pool.map(lambda f: publish(server, token, owner, uid, [f]).status_code, contenders)
        )
    assert sorted(codes) == [201, 409, 409, 409]
    # right after the answers, before any gc: only the winner's blob is stored
    assert leftovers(server)["unreferenced"] == []
    with server.hub.db.reader() as s:
        mine = [k for k in s.scalars(select(File.storage_key)) if f"/{uid}-" in k]
    assert len(mine) == 1
    assert [k for k, _ in server.hub.storage.list_keys("blobs/") if f"/{uid}-" in k] == mine


def test_a_failed_push_never_takes_a_blob_another_push_commits(server, user, uid, tmp_path):
    """Two pushes share a wheel's bytes (so its blob key). The worst interleaving, driven step
    by step through the hub's own publish stages: A stores the wheel; B (the same wheel plus
    a second sdist for the version, refused) fails and deletes its unreferenced blobs, the
    shared wheel among them; then A commits. A's wheel must still be there."""
    from prime_hub.storage.base import blob_key
    from prime_hub.validation import parse_version, validate_artifact

    owner, token = user
    hub = server.hub
    principal = hub.accounts.authenticate(token)
    assert publish(server, token, owner, uid, [make_sdist(uid, "1.0.0")]).status_code == 201

    def validated(fn: str, data: bytes):
        path = tmp_path / fn
        path.write_bytes(data)
        return validate_artifact(path, fn, hub.settings.max_uncompressed_bytes), path

    wheel = validated(*make_wheel(uid, "1.0.0"))
    members = {
        f"{uid}-1.0.0/PKG-INFO": f"Metadata-Version: 2.1\nName: {uid}\nVersion: 1.0.0\n\n".encode(),
        f"{uid}-1.0.0/other.py": b"Y = 2\n",
    }
    other_sdist = validated(*make_sdist(uid, "1.0.0", members=members))
    key = blob_key(wheel[0].sha256, wheel[0].filename)

    hub.publishing.store_artifacts([wheel])  # A, up to its commit
    env = hub.queries.get_environment(principal, owner, uid)
    with pytest.raises(Conflict):  # B fails and cleans up after itself
        hub.publishing.publish(principal, owner, uid, [wheel, other_sdist])
    assert not hub.storage.exists(key)  # B took the shared blob: nothing referenced it yet
    result = hub.publishing._publish_tx(
        principal, env.id, parse_version("1.0.0"), [wheel], None, None, None
    )
    assert result.added_files == [wheel[0].filename]
    with server.client() as c:  # A's commit restored it
        got = c.get(f"/files/{owner}/{uid}/{wheel[0].filename}", follow_redirects=True)
    assert got.status_code == 200 and got.content == wheel[1].read_bytes()
    assert leftovers(server)["unreferenced"] == []
