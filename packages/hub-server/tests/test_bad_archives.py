"""Malformed, unsafe and oversized uploads are refused cleanly and leave nothing behind."""

from __future__ import annotations

import io
import zipfile

import pytest
from prime_hub_testkit import (
    legacy_upload,
    make_sdist,
    make_targz,
    make_wheel,
    publish,
    row_counts,
)


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for k, v in members.items():
            zf.writestr(k, v)
    return buf.getvalue()


def _stored(wheel: bytes) -> bytes:
    buf = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(wheel)) as src,
        zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as dst,
    ):
        for zi in src.infolist():
            dst.writestr(zi.filename, src.read(zi.filename))
    return buf.getvalue()


def _cases(uid: str) -> list[tuple[str, tuple[str, bytes], int, str]]:
    fn, good = make_wheel(uid, "1.0.0")
    dist = uid
    sfn = f"{dist}-1.0.0.tar.gz"
    pkg_info = f"Metadata-Version: 2.1\nName: {uid}\nVersion: 1.0.0\n\n".encode()
    return [
        ("truncated wheel", (fn, good[: len(good) // 2]), 400, "not a zip archive"),
        ("not a zip", (fn, b"this is plain text, not a wheel" * 10), 400, "not a zip archive"),
        (
            "corrupt member",
            (fn, _stored(good).replace(b"load_environment", b"load_environmenX")),
            400,
            "corrupt",
        ),
        (
            "path traversal in wheel",
            (fn, make_wheel(uid, "1.0.0", extra_members={"../../evil.py": b"x"})[1]),
            400,
            "path traversal",
        ),
        (
            "absolute path in wheel",
            (fn, make_wheel(uid, "1.0.0", extra_members={"/etc/evil": b"x"})[1]),
            400,
            "path traversal",
        ),
        ("no METADATA", (fn, _zip({f"{dist}/__init__.py": b""})), 400, "METADATA"),
        (
            "truncated sdist",
            (sfn, make_sdist(uid, "1.0.0")[1][:-40]),
            400,
            "not a readable .tar.gz",
        ),
        (
            "sdist traversal",
            (sfn, make_targz({f"{dist}-1.0.0/PKG-INFO": pkg_info, "../escape.py": b"x"})),
            400,
            "path traversal",
        ),
        (
            "sdist symlink escaping",
            (
                sfn,
                make_targz(
                    {f"{dist}-1.0.0/PKG-INFO": pkg_info},
                    links={f"{dist}-1.0.0/l": "../../etc/passwd"},
                ),
            ),
            400,
            "escapes",
        ),
        ("sdist without PKG-INFO", (sfn, make_targz({f"{dist}-1.0.0/x.py": b""})), 400, "PKG-INFO"),
        ("unknown kind", (f"{dist}-1.0.0.exe", b"MZ"), 400, "only wheels"),
        ("file name with a path", (f"../{fn}", good), None, ""),
    ]


@pytest.mark.parametrize("case", range(12))
def test_bad_archive_refused(server, user, uid, case):
    owner, token = user
    label, files, status, message = _cases(uid)[case]
    r = publish(server, token, owner, uid, [files])
    if status is None:  # a client-side path is stripped to its base name, which is then fine
        assert r.status_code in (201, 400), r.text
        return
    assert r.status_code == status, f"{label}: {r.status_code} {r.text}"
    detail = r.json()["detail"]
    assert isinstance(detail, str) and message in detail, f"{label}: {detail}"
    assert row_counts(server.hub, uid)["versions"] == 0


def test_oversized_upload_refused(server, user, uid):
    owner, token = user
    limit = server.settings.max_upload_bytes
    big = "\n".join(f"# {i:08d} {'x' * 80}" for i in range(limit // 60))
    fn, data = make_wheel(uid, "1.0.0", body=big)
    data = _stored(data)  # deflate would shrink the text below the limit
    assert len(data) > limit
    r = publish(server, token, owner, uid, [(fn, data)])
    assert r.status_code == 413, r.text
    assert "limit" in r.json()["detail"]
    assert row_counts(server.hub, uid)["versions"] == 0


def test_zip_bomb_refused_by_declared_size(server, user, uid):
    owner, token = user
    limit = server.settings.max_uncompressed_bytes
    fn, _ = make_wheel(uid, "1.0.0")
    buf = io.BytesIO()
    base = make_wheel(uid, "1.0.0")[1]
    with (
        zipfile.ZipFile(io.BytesIO(base)) as src,
        zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as dst,
    ):
        for zi in src.infolist():
            dst.writestr(zi.filename, src.read(zi.filename))
        dst.writestr(f"{uid}/zeros.bin", b"\0" * (limit + 1))
    assert len(buf.getvalue()) < server.settings.max_upload_bytes
    r = publish(server, token, owner, uid, [(fn, buf.getvalue())])
    assert r.status_code == 400 and "uncompressed size" in r.json()["detail"]


def test_legacy_upload_rejects_contradicting_form(server, user, uid):
    _owner, token = user
    fn, data = make_wheel(uid, "1.0.0")
    with server.client() as c:
        r = legacy_upload(c, token, uid, "9.9.9", (fn, data))
        assert r.status_code == 400 and "the upload says 9.9.9" in r.json()["detail"]
        r = legacy_upload(c, token, uid, "1.0.0", (fn, data), sha256_digest="0" * 64)
        assert r.status_code == 400 and "does not match" in r.json()["detail"]
        r = c.post("/legacy/", data={":action": "file_upload"}, files={"content": (fn, data)})
        assert r.status_code == 401
