"""Failures in the middle of a publish: a killed server process, an artifact-store outage."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid

import httpx
from prime_hub_testkit import (
    NOTHING_STORED,
    make_wheel,
    one_version,
    publish,
    publish_to,
    row_counts,
)

from verifiers.testing import free_port, wait_listening


def _serve(server) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**os.environ, **server.env}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "prime_hub.cli",
            "serve",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_listening(port, proc, timeout=30)
    return proc, f"http://127.0.0.1:{port}"


def _multipart(fn: str, data: bytes) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="{fn}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    return (
        head + data + f"\r\n--{boundary}--\r\n".encode(),
        f"multipart/form-data; boundary={boundary}",
    )


def test_server_killed_mid_upload_leaves_nothing_and_retry_succeeds(server, user, uid):
    owner, token = user
    padding = "\n".join(f"# {i:06d} {'p' * 70}" for i in range(25_000))  # ~2 MB, compresses
    fn, wheel = make_wheel(uid, "1.0.0", body=padding + "\n")
    body, ctype = _multipart(fn, wheel + os.urandom(1) * 0)
    proc, url = _serve(server)
    sent = threading.Event()

    def slow_body():
        step = 64 * 1024
        for i in range(0, len(body), step):
            if i > len(body) // 2:
                sent.set()
                time.sleep(0.2)
            yield body[i : i + step]

    def killer():
        sent.wait(20)
        proc.send_signal(signal.SIGKILL)

    t = threading.Thread(target=killer)
    t.start()
    try:
        with httpx.Client(timeout=30) as c:
            c.post(
                f"{url}/api/v1/environments/{owner}/{uid}/versions",
                content=slow_body(),
                headers={"Authorization": f"Bearer {token}", "Content-Type": ctype},
            )
        raise AssertionError("the upload should have failed: the server was killed")
    except httpx.TransportError:
        pass
    finally:
        t.join()
        proc.wait(10)
    assert proc.returncode == -signal.SIGKILL
    assert row_counts(server.hub, uid) == NOTHING_STORED
    # a fresh process over the same database and store takes the retry
    proc, url = _serve(server)
    try:
        with httpx.Client(timeout=60) as c:
            r = c.post(
                f"{url}/api/v1/environments/{owner}/{uid}/versions",
                content=body,
                headers={"Authorization": f"Bearer {token}", "Content-Type": ctype},
            )
            assert r.status_code == 201, r.text
            files = c.get(
                f"{url}/{owner}/simple/{uid}/",
                headers={"Accept": "application/vnd.pypi.simple.v1+json"},
            ).json()["files"]
            assert [f["filename"] for f in files] == [fn]
    finally:
        proc.terminate()
        proc.wait(10)
    assert row_counts(server.hub, uid) == one_version(files=1)


def test_storage_outage_fails_cleanly_then_retry_succeeds(server, user, uid):
    owner, token = user
    files = [make_wheel(uid, "1.0.0")]
    if server.s3_proxy is not None:
        server.s3_proxy.cut()
        restore = server.s3_proxy.restore
    else:
        blobs = server.settings.resolved_artifact_dir / "blobs"
        blobs.mkdir(parents=True, exist_ok=True)
        moved = blobs.with_name("blobs.away")
        blobs.rename(moved)
        blobs.write_text("not a directory: the store is broken")

        def restore():
            blobs.unlink()
            moved.rename(blobs)

    try:
        r = publish(server, token, owner, uid, files)
        assert r.status_code == 503, r.text
        assert "artifact store failed" in r.json()["detail"]
        assert row_counts(server.hub, uid) == NOTHING_STORED
    finally:
        restore()
    r = publish(server, token, owner, uid, files)
    assert r.status_code == 201, r.text
    with server.client() as c:
        url = r.json()["files"][0]["url"]
        assert c.get(url, follow_redirects=True).content == files[0][1]


def test_serve_runs_migrations_on_a_fresh_database(tmp_path):
    port = free_port()
    env = {**os.environ, "PRIME_HUB_DATA_DIR": str(tmp_path / "fresh")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "prime_hub.cli", "serve", "--port", str(port), "--workers", "2"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_listening(port, proc, timeout=30)
        deadline = time.monotonic() + 20
        while True:
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/simple/", timeout=5)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        assert r.status_code == 200
    finally:
        proc.terminate()
        proc.wait(10)
    assert shutil.os.path.exists(tmp_path / "fresh" / "hub.db")


def test_index_cache_follows_writes_made_by_another_process(server, user, uid):
    owner, token = user
    publish(server, token, owner, uid, [make_wheel(uid, "1.0.0")])
    json_accept = {"Accept": "application/vnd.pypi.simple.v1+json"}
    with server.client() as c:
        assert c.get(f"/{owner}/simple/{uid}/", headers=json_accept).json()["versions"] == ["1.0.0"]
    proc, url = _serve(server)  # a second server process over the same database and store
    try:
        r = publish_to(url, token, owner, uid, [make_wheel(uid, "1.1.0")])
        assert r.status_code == 201, r.text
    finally:
        proc.terminate()
        proc.wait(10)
    deadline = time.monotonic() + server.settings.index_cache_seconds + 5
    with server.client() as c:
        while c.get(f"/{owner}/simple/{uid}/", headers=json_accept).json()["versions"] != [
            "1.0.0",
            "1.1.0",
        ]:
            assert time.monotonic() < deadline, "the cached page never noticed the other process"
            time.sleep(0.1)


def test_garbage_collection_removes_only_unreferenced_objects(server, user, uid, tmp_path):
    import datetime as dt

    from prime_hub.storage.base import blob_key

    owner, token = user
    fn, data = make_wheel(uid, "1.0.0")
    assert publish(server, token, owner, uid, [(fn, data)]).status_code == 201
    orphan = tmp_path / "orphan.whl"
    orphan.write_bytes(b"left behind by a crash between storing and committing")
    key = blob_key("ab" * 32, f"{uid}-9.9.9-py3-none-any.whl")
    server.hub.storage.put_file(key, orphan)
    assert server.hub.storage.exists(key)
    assert key not in server.hub.cleanup.collect_garbage()  # too young: may be an upload in flight
    removed = server.hub.cleanup.collect_garbage(grace=dt.timedelta(seconds=-5))
    assert key in removed and not server.hub.storage.exists(key)
    with server.client() as c:  # published files are untouched
        url = c.get(f"/api/v1/environments/{owner}/{uid}/versions/1.0.0").json()["files"][0]["url"]
        assert c.get(url, follow_redirects=True).content == data
