"""The upload size cap holds while the body streams, on every upload route, for every scope.

A real server process (``prime-hub serve``) with its own empty ``TMPDIR`` takes a chunked body
(no Content-Length) far over the cap. It must answer 413 (or 403 first, for a token that may
not upload there) having read no more than the cap plus what the sockets buffer, its spool
area must never hold more than the cap, and the host's temp dir must stay untouched.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from prime_hub_testkit import make_wheel

from verifiers.testing import free_port, wait_listening

CHUNK = 64 * 1024
TOTAL = 96 * 1024 * 1024  # what the client would send if nobody stopped it
SOCKET_SLACK = 24 * 1024 * 1024  # kernel buffers on loopback, both directions, generously


@dataclass
class Proc:
    url: str
    host_tmp: Path
    spool: Path
    cap: int


@pytest.fixture(scope="module")
def proc(server, tmp_path_factory) -> Iterator[Proc]:
    host_tmp = tmp_path_factory.mktemp("host-tmp")
    port = free_port()
    env = {**os.environ, **server.env, "TMPDIR": str(host_tmp)}
    p = subprocess.Popen(
        [sys.executable, "-m", "prime_hub.cli", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_listening(port, p, timeout=30)
        yield Proc(
            f"http://127.0.0.1:{port}",
            host_tmp,
            Path(server.settings.data_dir).resolve() / "spool",
            server.settings.max_upload_bytes,
        )
    finally:
        p.terminate()
        p.wait(10)


class Flood:
    """A chunked body of ``TOTAL`` bytes (a multipart head first, if given) that counts what
    the server pulled, while a sampler records the largest the spool area ever got."""

    def __init__(self, spool: Path, head: bytes = b"") -> None:
        self.head = head
        self.spool = spool
        self.sent = 0
        self.spool_max = 0
        self._done = threading.Event()
        self._sampler = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._done.wait(0.002):
            total = 0
            for root, _dirs, files in os.walk(self.spool):
                for f in files:
                    try:
                        total += os.stat(os.path.join(root, f)).st_size
                    except FileNotFoundError:
                        pass
            self.spool_max = max(self.spool_max, total)

    def body(self) -> Iterator[bytes]:
        self._sampler.start()
        yield self.head
        block = os.urandom(CHUNK)
        while self.sent < TOTAL:
            self.sent += CHUNK
            yield block

    def stop(self) -> None:
        self._done.set()
        if self._sampler.is_alive():
            self._sampler.join(5)


def _post(url: str, flood: Flood, headers: dict[str, str], method: str = "POST") -> int:
    with httpx.Client(timeout=60) as c:
        try:
            return c.request(method, url, content=flood.body(), headers=headers).status_code
        finally:
            flood.stop()


def _multipart_head(field: str, filename: str) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name=":action"\r\n\r\nfile_upload\r\n'
        f'--{boundary}\r\nContent-Disposition: form-data; name="{field}"; filename="{filename}"'
        "\r\nContent-Type: application/octet-stream\r\n\r\n"
    ).encode()
    return head, f"multipart/form-data; boundary={boundary}"


def _token(server, owner: str, kind: str, env: str) -> str:
    spec = {
        "publish": {"scope": "publish"},
        "read": {"scope": "read"},
        "bound-elsewhere": {"scope": "publish", "environment": f"{owner}/{env}-other"},
    }[kind]
    return server.hub.accounts.create_token(owner, **spec)[1]


# (route, token kind) -> the answer: 403 when the token may not upload there at all (decided
# before the body is read), else 413 once the cap is passed
CASES = [
    ("api", "publish", 413),
    ("api", "read", 403),
    ("api", "bound-elsewhere", 403),
    ("legacy", "publish", 413),
    ("legacy", "read", 403),
    ("legacy", "bound-elsewhere", 413),  # same owner: allowed to start, stopped by the cap
    ("legacy-owner", "publish", 413),
    ("legacy-owner", "read", 403),
    ("staged-put", "publish", 413),
    ("staged-put", "read", 413),  # the upload id is the credential; the cap holds regardless
]


@pytest.mark.parametrize(("route", "kind", "status"), CASES, ids=lambda x: str(x))
def test_chunked_body_over_the_cap_is_cut_off_while_streaming(
    server, proc, uid, route, kind, status
):
    owner, publish_tok = server.new_user("cap")
    token = _token(server, owner, kind, uid)
    fn = f"{uid}-1.0.0-py3-none-any.whl"
    auth = {"Authorization": f"Bearer {token}"}
    if route == "staged-put":
        with httpx.Client(base_url=proc.url, timeout=30) as c:
            r = c.post(
                f"/api/v1/environments/{owner}/{uid}/uploads",
                headers={"Authorization": f"Bearer {publish_tok}"},
                json={
                    "version": "1.0.0",
                    "files": [{"filename": fn, "sha256": "0" * 64, "size": proc.cap}],
                },
            )
            assert r.status_code == 200, r.text
            upload_id = r.json()["uploads"][0]["upload_id"]
        flood = Flood(proc.spool)
        got = _post(f"{proc.url}/api/v1/uploads/{upload_id}", flood, auth, method="PUT")
    else:
        field = "files" if route == "api" else "content"
        head, ctype = _multipart_head(field, fn)
        path = {
            "api": f"/api/v1/environments/{owner}/{uid}/versions",
            "legacy": "/legacy/",
            "legacy-owner": f"/{owner}/legacy/",
        }[route]
        flood = Flood(proc.spool, head)
        got = _post(proc.url + path, flood, {**auth, "Content-Type": ctype})
    assert got == status
    assert flood.sent < proc.cap + SOCKET_SLACK < TOTAL  # the server stopped reading
    assert flood.spool_max <= proc.cap  # never more than the cap on disk
    if status == 403:
        assert flood.spool_max == 0  # refused before a byte was spooled
    assert list(proc.host_tmp.iterdir()) == []  # nothing went to the host's temp dir
    assert not proc.spool.exists() or list(proc.spool.iterdir()) == []


def test_chunked_upload_within_the_cap_still_publishes(server, proc, uid):
    owner, token = server.new_user("capok")
    fn, wheel = make_wheel(uid, "1.0.0")
    head, ctype = _multipart_head("content", fn)
    boundary = ctype.rsplit("=", 1)[1]
    body = head + wheel + f"\r\n--{boundary}--\r\n".encode()

    def chunks() -> Iterator[bytes]:  # no Content-Length: chunked transfer encoding
        for i in range(0, len(body), 1000):
            yield body[i : i + 1000]

    with httpx.Client(timeout=30) as c:
        r = c.post(
            f"{proc.url}/legacy/",
            content=chunks(),
            headers={"Authorization": f"Bearer {token}", "Content-Type": ctype},
        )
    assert r.status_code == 201, r.text
    assert r.json()["files"] == [fn]
    with httpx.Client(timeout=30) as c:
        got = c.get(f"{proc.url}/files/{owner}/{uid}/{fn}", follow_redirects=True).content
    assert hashlib.sha256(got).hexdigest() == hashlib.sha256(wheel).hexdigest()


WEB_FORMS = [  # every POST of the web pages; a body that is not a small urlencoded form
    ("/login", "multipart", 400),
    ("/login", "urlencoded", 413),
    ("/logout", "urlencoded", 413),
    ("/settings/tokens", "multipart", 400),
    ("/settings/tokens", "urlencoded", 413),
    ("/settings/tokens/1/revoke", "urlencoded", 413),
]


@pytest.mark.parametrize(("path", "body", "status"), WEB_FORMS, ids=lambda x: str(x))
@pytest.mark.parametrize("kind", ["publish", "read"])
def test_web_form_floods_are_cut_off(server, proc, uid, path, body, status, kind):
    owner, _ = server.new_user("capweb")
    token = _token(server, owner, kind, uid)
    if body == "multipart":
        head, ctype = _multipart_head("token", "flood.bin")
    else:
        head, ctype = b"csrf=x&name=", "application/x-www-form-urlencoded"
    flood = Flood(proc.spool, head)
    headers = {"Content-Type": ctype, "Cookie": f"prime_hub_token={token}"}
    assert _post(proc.url + path, flood, headers) == status
    assert flood.sent < SOCKET_SLACK < TOTAL
    assert list(proc.host_tmp.iterdir()) == []
