"""Helpers for the prime-hub tests: real servers (PostgreSQL, S3, the hub) and package files."""

from __future__ import annotations

import base64
import contextlib
import glob
import hashlib
import io
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from prime_hub.app import build_hub, create_asgi
from prime_hub.service import Hub
from prime_hub.settings import Settings
from verifiers.testing import free_port, wait_listening


# ------------------------------------------------------------------ PostgreSQL
def _pg_bindir() -> Path:
    for pg_ctl in sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), reverse=True):
        return Path(pg_ctl).parent
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent
    raise RuntimeError(
        "PostgreSQL server binaries not found (initdb/pg_ctl). Install Debian's 'postgresql' "
        "package (scripts/system-deps.sh does it) or set PRIME_HUB_TEST_DATABASE_URL."
    )


@dataclass
class Postgres:
    url_base: str  # postgresql+psycopg://postgres@127.0.0.1:PORT
    stop: object = None
    _counter: int = 0

    def new_database(self, name: str) -> str:
        import psycopg

        dsn = self.url_base.replace("postgresql+psycopg://", "postgresql://")
        with psycopg.connect(dsn + "/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        return f"{self.url_base}/{name}"


def _run_pg(cmd: list[str]) -> None:
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(
            f"starting the test PostgreSQL failed: {' '.join(cmd)}\n{r.stdout}\n{r.stderr}"
        )


@contextlib.contextmanager
def postgres_server() -> Iterator[Postgres]:
    configured = os.environ.get("PRIME_HUB_TEST_DATABASE_URL")
    if configured:
        base = configured.rsplit("/", 1)[0]
        yield Postgres(url_base=base)
        return
    bindir = _pg_bindir()
    tmp = Path(tempfile.mkdtemp(prefix="prime-hub-pg-"))
    data = tmp / "data"
    port = free_port()
    as_user: list[str] = []
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root
        as_user = ["runuser", "-u", "nobody", "--"]
        shutil.chown(tmp, "nobody")
        os.chmod(tmp, 0o700)
    _run_pg(
        [
            *as_user,
            str(bindir / "initdb"),
            "-D",
            str(data),
            "-U",
            "postgres",
            "--auth=trust",
            "--no-sync",
            "-E",
            "UTF8",
            "--locale=C",
        ],
    )
    opts = (
        f"-p {port} -k {tmp} -c listen_addresses=127.0.0.1 -c fsync=off "
        "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
    )
    _run_pg(
        [
            *as_user,
            str(bindir / "pg_ctl"),
            "-D",
            str(data),
            "-o",
            opts,
            "-l",
            str(tmp / "log"),
            "-w",
            "-t",
            "60",
            "start",
        ]
    )
    try:
        yield Postgres(url_base=f"postgresql+psycopg://postgres@127.0.0.1:{port}")
    finally:
        subprocess.run(
            [*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
            capture_output=True,
        )
        shutil.rmtree(tmp, ignore_errors=True)


# ------------------------------------------------------------------ S3 (moto) and a cuttable proxy
@contextlib.contextmanager
def moto_server() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_listening(port, proc, timeout=30)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)


class TcpProxy:
    """A loopback TCP forwarder that a test can cut (connections refused) and restore."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = free_port()
        self._listener: socket.socket | None = None
        self._conns: list[socket.socket] = []
        self._thread: threading.Thread | None = None
        self.start()

    def start(self) -> None:
        ls = socket.socket()
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind(("127.0.0.1", self.port))
        ls.listen(128)
        self._listener = ls
        self._thread = threading.Thread(target=self._accept, args=(ls,), daemon=True)
        self._thread.start()

    def _accept(self, ls: socket.socket) -> None:
        while True:
            try:
                client, _ = ls.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                client.close()
                continue
            self._conns += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(a: socket.socket, b: socket.socket) -> None:
        try:
            while data := a.recv(65536):
                b.sendall(data)
        except OSError:
            pass
        finally:
            for s in (a, b):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        if self._listener is not None:  # shutdown wakes the accept() thread; close alone would not
            with contextlib.suppress(OSError):
                self._listener.shutdown(socket.SHUT_RDWR)
            self._listener.close()
            self._listener = None
        if self._thread is not None:
            self._thread.join(5)
        for c in self._conns:  # shutdown wakes the pipe threads; close alone would not
            with contextlib.suppress(OSError):
                c.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                c.close()
        self._conns.clear()

    def restore(self) -> None:
        if self._listener is None:
            self.start()


# ------------------------------------------------------------------ an upstream index
# The repository's PEP 503 stand-in for PyPI (a static folder over HTTP that logs each
# request's path and Authorization header), shared with the end-to-end install tests.
LOGGING_INDEX_SERVER = Path(__file__).resolve().parents[3] / "tests" / "logging_index_server.py"


@dataclass
class StandInIndex:
    """A real PEP 503 index on loopback: ``serve(name)`` adds a project page."""

    url: str  # http://127.0.0.1:PORT/simple/
    root: Path
    log: Path

    def serve(self, name: str) -> None:
        from prime_hub.names import normalize

        page = self.root / "simple" / normalize(name)
        page.mkdir(parents=True, exist_ok=True)
        filename = f"{normalize(name).replace('-', '_')}-1.0-py3-none-any.whl"
        (page / "index.html").write_text(
            f'<!DOCTYPE html><html><body><a href="../../files/{filename}">{filename}</a>'
            "</body></html>\n"
        )

    def requests(self) -> list[tuple[str, str]]:
        """(path, Authorization or '-') of every request so far."""
        lines = self.log.read_text().splitlines() if self.log.exists() else []
        return [tuple(line.split("\t", 1)) for line in lines]  # type: ignore[misc]

    def asked_for(self, name: str) -> list[str]:
        """The Authorization headers of the requests for ``name``'s page."""
        from prime_hub.names import normalize

        return [auth for path, auth in self.requests() if path == f"/simple/{normalize(name)}/"]


@contextlib.contextmanager
def stand_in_index(root: Path, names: tuple[str, ...] = ()) -> Iterator[StandInIndex]:
    (root / "simple").mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = root / "requests.log"
    proc = subprocess.Popen(
        [sys.executable, str(LOGGING_INDEX_SERVER), str(port), str(root), str(log)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_listening(port, proc, timeout=30)
        index = StandInIndex(f"http://127.0.0.1:{port}/simple/", root, log)
        for name in names:
            index.serve(name)
        yield index
    finally:
        proc.terminate()
        proc.wait(10)


# ------------------------------------------------------------------ the hub in a thread
@dataclass
class HubServer:
    name: str
    settings: Settings
    hub: Hub
    url: str
    env: dict[str, str] = field(default_factory=dict)  # PRIME_HUB_* for a subprocess
    s3_proxy: TcpProxy | None = None
    _server: uvicorn.Server | None = None
    _thread: threading.Thread | None = None
    _users: int = 0

    def client(self, token: str | None = None, **kw) -> httpx.Client:  # type: ignore[no-untyped-def]
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60, **kw)

    def new_user(self, prefix: str = "u", scope: str = "publish") -> tuple[str, str]:
        self._users += 1
        slug = f"{prefix}{self._users}-{os.getpid() % 1000}"
        self.hub.accounts.create_user(slug)
        _, token = self.hub.accounts.create_token(slug, scope)
        return slug, token

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)
        self.hub.db.dispose()


def start_hub(name: str, settings: Settings, env: dict[str, str]) -> HubServer:
    hub = build_hub(settings, migrate=True)
    app = create_asgi(settings, hub)
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_listening(port)
    return HubServer(name, settings, hub, f"http://127.0.0.1:{port}", env, None, server, thread)


# ------------------------------------------------------------------ package files
def _dist_info_name(name: str) -> str:
    import re

    return re.sub(r"[-_.]+", "_", name).lower()


def make_wheel(
    name: str,
    version: str,
    *,
    deps: list[str] = (),  # type: ignore[assignment]
    meta_name: str | None = None,
    meta_version: str | None = None,
    requires_python: str | None = ">=3.8",
    body: str = "",
    extra_members: dict[str, bytes] | None = None,
    summary: str = "a test environment",
) -> tuple[str, bytes]:
    """A valid, installable pure-Python wheel (METADATA may be made to lie for tests)."""
    dist = _dist_info_name(name)
    filename = f"{dist}-{version}-py3-none-any.whl"
    di = f"{dist}-{version}.dist-info"
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {meta_name or name}",
        f"Version: {meta_version or version}",
        f"Summary: {summary}",
        "Keywords: test,env",
    ]
    if requires_python:
        lines.append(f"Requires-Python: {requires_python}")
    lines += [f"Requires-Dist: {d}" for d in deps]
    metadata = ("\n".join(lines) + "\n\n" + f"# {name}\n\nREADME of {name}.\n").encode()
    files = {
        f"{dist}/__init__.py": (
            f"VERSION = {version!r}\n\ndef load_environment(**kw):\n    return {name!r}\n{body}"
        ).encode(),
        f"{di}/METADATA": metadata,
        f"{di}/WHEEL": b"Wheel-Version: 1.0\nGenerator: prime-hub-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    files.update(extra_members or {})
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{di}/RECORD,,")
    files[f"{di}/RECORD"] = ("\n".join(record) + "\n").encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, data in files.items():
            zf.writestr(path, data)
    return filename, buf.getvalue()


def make_sdist(
    name: str,
    version: str,
    *,
    meta_name: str | None = None,
    members: dict[str, bytes] | None = None,
) -> tuple[str, bytes]:
    dist = _dist_info_name(name)
    top = f"{dist}-{version}"
    filename = f"{top}.tar.gz"
    pkg_info = f"Metadata-Version: 2.1\nName: {meta_name or name}\nVersion: {version}\n\n".encode()
    content = {f"{top}/PKG-INFO": pkg_info, f"{top}/{dist}/__init__.py": b"X = 1\n"}
    if members is not None:
        content = members
    return filename, make_targz(content)


def make_targz(members: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for path, data in members.items():
            ti = tarfile.TarInfo(path)
            ti.size = len(data)
            tf.addfile(ti, io.BytesIO(data))
        for path, target in (links or {}).items():
            ti = tarfile.TarInfo(path)
            ti.type = tarfile.SYMTYPE
            ti.linkname = target
            tf.addfile(ti)
    return buf.getvalue()


def publish(
    server: HubServer, token: str, owner: str, name: str, files: list[tuple[str, bytes]], **data
) -> httpx.Response:  # type: ignore[no-untyped-def]
    with server.client(token) as c:
        return c.post(
            f"/api/v1/environments/{owner}/{name}/versions",
            files=[("files", (fn, content, "application/octet-stream")) for fn, content in files],
            data=data,
        )


def legacy_upload(
    c: httpx.Client, token: str, name: str, version: str, file: tuple[str, bytes], **form: str
) -> httpx.Response:
    """`file` uploaded to /legacy/ as twine sends it (``:action=file_upload``, `name`,
    `version`, and any other `form` fields)."""
    return c.post(
        "/legacy/",
        auth=("__token__", token),
        data={":action": "file_upload", "name": name, "version": version, **form},
        files={"content": file},
    )


def publish_to(
    url: str, token: str, owner: str, name: str, files: list[tuple[str, bytes]]
) -> httpx.Response:
    """`publish`, to a hub at ``url`` (another server process over the same database)."""
    with httpx.Client(timeout=30) as c:
        return c.post(
            f"{url}/api/v1/environments/{owner}/{name}/versions",
            headers={"Authorization": f"Bearer {token}"},
            files=[("files", (fn, content)) for fn, content in files],
        )


class _RecordingCursor:
    """A driver cursor that reports each statement executed on it."""

    def __init__(self, cursor: Any, record: Callable[[str, Any], None]) -> None:
        self._cursor = cursor
        self._record = record

    def execute(self, sql: str, params: Any = ()) -> Any:
        self._record(sql, params)
        return self._cursor.execute(sql, params)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)


@contextlib.contextmanager
def driver_statements(hub: Hub, record: Callable[[str, Any], None]) -> Iterator[None]:
    """While the block runs, ``record(sql, params)`` for every statement run on a
    `Database.read_cursor` (the listings' compiled statements), which the engines' events
    do not see."""
    plain = getattr(hub.db, "read_cursor", None)
    if plain is None:  # an older hub's (bench/hub/listings.py serves older trees too)
        yield
        return

    @contextlib.contextmanager
    def recording() -> Iterator[Any]:
        with plain() as cur:
            yield _RecordingCursor(cur, record)

    hub.db.read_cursor = recording  # type: ignore[method-assign]
    try:
        yield
    finally:
        del hub.db.read_cursor  # the class's own again


@contextlib.contextmanager
def statements_sent(hub: Hub, *, change_counter: bool = True) -> Iterator[list[str]]:
    """Every SQL statement ``hub`` sends while the block runs (both engines on SQLite), but
    for download-count flushes that earlier tests' downloads may leave to a background
    thread; ``change_counter=False`` also leaves out the listing cache's read of the change
    counter (and its BEGIN), which a path's first request does not make."""
    from sqlalchemy import event

    seen: list[str] = []

    def count(conn, cursor, statement, parameters, context, executemany):  # type: ignore[no-untyped-def]
        if threading.current_thread().name == "download-counts":
            return
        if not change_counter and "hub_state" in statement:
            if seen and seen[-1] == "BEGIN":
                seen.pop()
            return
        seen.append(statement)

    engines = {id(e): e for e in (hub.db.read_engine, hub.db.write_engine)}
    counter_reads = hub.db.counter.reads
    for e in engines.values():
        event.listen(e, "before_cursor_execute", count)
    try:
        with driver_statements(hub, lambda sql, _params: count(None, None, sql, None, None, False)):
            yield seen
    finally:
        for e in engines.values():
            event.remove(e, "before_cursor_execute", count)
        # the listing cache reads the counter on a connection of its own (`db.counter`),
        # first thing in a request, out of the engines' sight
        if change_counter:
            seen[:0] = [hub.db.counter.statement] * (hub.db.counter.reads - counter_reads)


# what `row_counts` finds for a name nothing was stored under
NOTHING_STORED = {"environments": 0, "versions": 0, "files": 0, "pending": 0}


def one_version(files: int) -> dict[str, int]:
    """What `row_counts` finds for an environment with one version of `files` files and no
    upload pending."""
    return {"environments": 1, "versions": 1, "files": files, "pending": 0}


def row_counts(hub: Hub, env_name: str) -> dict[str, int]:
    from sqlalchemy import func, select

    from prime_hub.db.models import Environment, File, PendingUpload, Version
    from prime_hub.names import normalize

    with hub.db.reader() as s:
        env_ids = list(
            s.scalars(
                select(Environment.id).where(Environment.normalized_name == normalize(env_name))
            )
        )
        return {
            "environments": len(env_ids),
            "versions": s.scalar(
                select(func.count()).select_from(Version).where(Version.environment_id.in_(env_ids))
            )
            or 0,
            "files": s.scalar(
                select(func.count()).select_from(File).where(File.environment_id.in_(env_ids))
            )
            or 0,
            "pending": s.scalar(
                select(func.count())
                .select_from(PendingUpload)
                .where(PendingUpload.environment_id.in_(env_ids))
            )
            or 0,
        }


def clean_env() -> dict[str, str]:
    """Environment for pip/uv subprocesses: no machine config, no network indexes."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_", "VIRTUAL_ENV"))}
    env.update(
        PIP_CONFIG_FILE=os.devnull,
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_CACHE_DIR="1",
        UV_NO_CONFIG="1",
        UV_NO_CACHE="1",
        UV_PYTHON_DOWNLOADS="never",
    )
    return env
