"""Helpers and fixtures for the cross-package end-to-end tests: a real hub process, the real `prime` CLI,
fresh virtual environments made with uv, the scripted model server, and a second package index.

Everything expensive (the hub, the verifiers wheel, accounts, the published environment) is
built once per session.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from verifiers.testing import free_port, wait_listening

ROOT = Path(__file__).resolve().parents[1]
ENV = "e2e-arith"  # the environment every test installs
REF = f"alice/{ENV}"
BIN = Path(sys.executable).parent


def uv() -> str:
    found = shutil.which("uv", path=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    assert found, "uv must be on PATH (it is a dev dependency of the workspace)"
    return found


_pycache: Path | None = None  # the session's bytecode cache, while `bytecode_cache` is active


@pytest.fixture(scope="session", autouse=True)
def bytecode_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One temporary bytecode cache for every subprocess of the session, removed at its end.

    The tests start `prime`, vf-eval, the hub and fresh interpreters dozens of times; without
    a cache each of them compiles every module it imports again. PYTHONPYCACHEPREFIX keeps
    the .pyc files out of the source trees (the repository, the site-packages of shared
    virtualenvs): Python writes them under this folder only."""
    global _pycache
    folder = tmp_path_factory.mktemp("pycache")
    _pycache = folder
    try:
        yield folder
    finally:
        _pycache = None
        shutil.rmtree(folder, ignore_errors=True)


def bytecode_env() -> dict[str, str]:
    """Bytecode settings for a subprocess: cached under the session's temporary folder; not
    written at all outside a session (`bytecode_cache` not active)."""
    if _pycache is None:
        return {"PYTHONDONTWRITEBYTECODE": "1"}
    return {"PYTHONPYCACHEPREFIX": str(_pycache)}


def base_env() -> dict[str, str]:
    """A subprocess environment without the caller's virtualenv, pip or uv index settings."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PIP_", "VIRTUAL_ENV", "PRIME_", "CONDA_"))
        and not (k.startswith("UV_") and k != "UV_CACHE_DIR")
        and k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")
    }
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"  # uv and prime of the workspace
    env.update(
        PIP_CONFIG_FILE=os.devnull,
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        UV_NO_CONFIG="1",
        UV_PYTHON_DOWNLOADS="never",
        **bytecode_env(),
    )
    return env


# ------------------------------------------------------------------ the hub
@dataclass
class Hub:
    url: str
    data_dir: Path
    tokens: dict[str, str] = field(default_factory=dict)

    def admin(self, *args: str) -> str:
        """`prime-hub admin ...` against this hub's database; returns what it printed."""
        from prime_hub.cli import main as hub_cli

        buf, errbuf = io.StringIO(), io.StringIO()
        old = os.environ.get("PRIME_HUB_DATA_DIR")
        os.environ["PRIME_HUB_DATA_DIR"] = str(self.data_dir)
        try:
            with redirect_stdout(buf), redirect_stderr(errbuf):
                rc = hub_cli(["admin", *args])
        finally:
            if old is None:
                os.environ.pop("PRIME_HUB_DATA_DIR", None)
            else:
                os.environ["PRIME_HUB_DATA_DIR"] = old
        assert rc == 0, errbuf.getvalue()
        return buf.getvalue().strip()

    def user(self, name: str) -> str:
        """Create `name` (once) and return a publish token for them."""
        if name not in self.tokens:
            self.admin("create-user", name)
            self.tokens[name] = self.admin("create-token", name)
        return self.tokens[name]


@pytest.fixture(scope="session")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    with running_hub(tmp_path_factory.mktemp("hub-data")) as h:
        yield h


@contextlib.contextmanager
def serving(
    argv: list[str], port: int, log: Path | None = None, **popen: object
) -> Iterator[subprocess.Popen[bytes]]:
    """A server process, yielded once it listens on `port`, stopped on exit (its output to `log`)."""
    with open(log, "wb") if log else contextlib.nullcontext(subprocess.DEVNULL) as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, **popen)  # type: ignore[call-overload]
        try:
            wait_listening(port, proc, timeout=60)
            yield proc
        finally:
            proc.terminate()
            proc.wait(10)


@contextlib.contextmanager
def running_hub(data: Path, **settings: str) -> Iterator[Hub]:
    """A prime-hub process over the folder `data` (SQLite + artifacts); `settings` are extra
    PRIME_HUB_* variables."""
    data.mkdir(parents=True, exist_ok=True)
    port = free_port()
    # the admin's allow-list lets every name through: without it the hub would ask PyPI about
    # each new name (aime is PyPI's too); the name policy is tested in packages/hub-server
    env = base_env() | {
        "PRIME_HUB_DATA_DIR": str(data),
        "PRIME_HUB_ALLOWED_UPSTREAM_NAMES": '["*"]',
    }
    argv = [str(BIN / "prime-hub"), "serve", "--port", str(port), "--log-level", "warning"]
    with serving(argv, port, log=data / "server.log", env=env | settings):
        yield Hub(f"http://127.0.0.1:{port}", data)


# ------------------------------------------------------------------ the CLI
@dataclass
class Result:
    rc: int
    out: str
    err: str

    def ok(self) -> Result:
        assert self.rc == 0, f"exit {self.rc}\nstdout: {self.out}\nstderr: {self.err}"
        return self


@dataclass
class Prime:
    """Runs the real `prime` console script with its own config and cache folders."""

    hub: Hub
    home: Path
    token: str | None = None

    def env(self, **extra: str) -> dict[str, str]:
        env = base_env() | {
            "PRIME_HUB_URL": self.hub.url,
            "PRIME_CONFIG_DIR": str(self.home / "config"),
            "PRIME_CACHE_DIR": str(self.home / "cache"),
            "PRIME_CLI": str(BIN / "prime"),
        }
        if self.token:
            env["PRIME_TOKEN"] = self.token
        return env | extra

    def __call__(self, *args: str | Path, cwd: Path | None = None, **extra: str) -> Result:
        r = subprocess.run(
            [str(BIN / "prime"), *map(str, args)],
            cwd=cwd or self.home,
            env=self.env(**extra),
            capture_output=True,
            text=True,
            timeout=300,
        )
        return Result(r.returncode, r.stdout, r.stderr)


@pytest.fixture(scope="session")
def prime_as(hub: Hub, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """`prime_as("alice")` → a Prime for that user (None: anonymous)."""
    made: dict[str | None, Prime] = {}

    def get(user: str | None) -> Prime:
        if user not in made:
            home = tmp_path_factory.mktemp(f"prime-{user or 'anon'}")
            made[user] = Prime(hub, home, hub.user(user) if user else None)
        return made[user]

    return get


# ------------------------------------------------------------------ Python environments
def build_wheel(package: str, out: Path) -> Path:
    """The workspace package `packages/<package>` built as a wheel into `out`."""
    subprocess.run(
        [uv(), "build", "--wheel", "-q", "-o", str(out), str(ROOT / "packages" / package)],
        check=True,
        env=base_env(),
        capture_output=True,
    )
    (wheel,) = out.glob("*.whl")
    return wheel


@pytest.fixture(scope="session")
def verifiers_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Our verifiers SDK as a wheel, built once from the workspace."""
    return build_wheel("verifiers", tmp_path_factory.mktemp("verifiers-wheel"))


@pytest.fixture(scope="session")
def prime_cli_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Our `prime` CLI as a wheel, built once from the workspace: the hub serves it beside the
    SDK, and a scaffolded package's dev group installs it from there."""
    return build_wheel("cli", tmp_path_factory.mktemp("prime-cli-wheel"))


def install_sdk(python: Path, wheel: Path) -> None:
    """Our verifiers wheel and its dependencies: from uv's cache when it has them all."""
    cmd = [uv(), "pip", "install", "-q", "--python", str(python), str(wheel)]
    for extra in (["--offline"], []):
        r = subprocess.run(cmd + extra, env=base_env(), capture_output=True, text=True)
        if r.returncode == 0:
            return
    raise AssertionError(f"installing {wheel.name} failed: {r.stderr}")


@pytest.fixture
def make_venv(tmp_path: Path, verifiers_wheel: Path):  # type: ignore[no-untyped-def]
    """`make_venv(name, sdk=True, pip=False)` → the python of a fresh virtualenv."""

    def make(name: str = "venv", sdk: bool = True, pip: bool = False) -> Path:
        venv = tmp_path / name
        cmd = [uv(), "venv", "-q", *(["--seed"] if pip else []), str(venv)]
        subprocess.run(cmd, check=True, env=base_env(), capture_output=True)
        python = venv / "bin" / "python"
        if sdk:
            install_sdk(python, verifiers_wheel)
        return python

    return make


def run_py(python: Path, code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), "-c", code],
        capture_output=True,
        text=True,
        env=base_env() | env,
        timeout=300,
    )


def installed_version(python: Path, dist: str) -> str | None:
    r = run_py(python, f"import importlib.metadata as m; print(m.version({dist!r}))")
    return r.stdout.strip() if r.returncode == 0 else None


# ------------------------------------------------------------------ model server
@pytest.fixture(scope="session")
def scripted_model() -> Iterator[str]:
    """`python -m verifiers.testing serve`: an OpenAI-compatible server that does arithmetic."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "verifiers.testing", "serve"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=base_env(),
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("READY "), line
        yield line.split(" ", 1)[1]
    finally:
        proc.terminate()
        proc.wait(10)


# ------------------------------------------------------------------ packages and indexes
def wheel_bytes(name: str, version: str, module_body: str, deps: list[str] = ()) -> bytes:  # type: ignore[assignment]
    """A minimal valid pure-Python wheel (hand-written, for the impostor index)."""
    dist = name.replace("-", "_")
    di = f"{dist}-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    meta += "".join(f"Requires-Dist: {d}\n" for d in deps)
    files = {
        f"{dist}/__init__.py": module_body.encode(),
        f"{di}/METADATA": meta.encode(),
        f"{di}/WHEEL": b"Wheel-Version: 1.0\nGenerator: e2e\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    files[f"{di}/RECORD"] = ("\n".join([*record, f"{di}/RECORD,,"]) + "\n").encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for path, data in files.items():
            zf.writestr(path, data)
    return buf.getvalue()


@dataclass
class StaticIndex:
    url: str  # .../simple/
    root: Path

    def add(self, name: str, version: str, data: bytes) -> None:
        norm = name.replace("_", "-").lower()
        filename = f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
        (self.root / "files").mkdir(exist_ok=True)
        (self.root / "files" / filename).write_bytes(data)
        page = self.root / "simple" / norm
        page.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256(data).hexdigest()
        (page / "index.html").write_text(
            f'<!DOCTYPE html><html><body><a href="../../files/{filename}#sha256={digest}">'
            f"{filename}</a></body></html>\n"
        )


@pytest.fixture(scope="session")
def other_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StaticIndex]:
    """A second package index: a static PEP 503 folder served over HTTP."""
    root = tmp_path_factory.mktemp("other-index")
    (root / "simple").mkdir()
    port = free_port()
    argv = [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"]
    with serving(argv, port, cwd=root):
        yield StaticIndex(f"http://127.0.0.1:{port}/simple/", root)


@pytest.fixture(scope="session")
def hub_client(hub: Hub):  # type: ignore[no-untyped-def]
    @contextlib.contextmanager
    def make(token: str | None = None) -> Iterator[httpx.Client]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        with httpx.Client(base_url=hub.url, headers=headers, timeout=30) as c:
            yield c

    return make


@pytest.fixture(scope="session")
def shared_venv(tmp_path_factory: pytest.TempPathFactory, verifiers_wheel: Path) -> Path:
    """One virtualenv (with pip and our verifiers) for tests that need not start empty."""
    venv = tmp_path_factory.mktemp("shared") / "venv"
    subprocess.run([uv(), "venv", "-q", "--seed", str(venv)], check=True, env=base_env())
    python = venv / "bin" / "python"
    install_sdk(python, verifiers_wheel)
    return python


@pytest.fixture(scope="session")
def published(prime_as, tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    """alice's environment from `prime env init`, pushed as 0.1.0 and (bumped) 0.1.1."""
    alice: Prime = prime_as("alice")
    work = tmp_path_factory.mktemp("authoring")
    alice("env", "init", ENV, "--path", work).ok()
    project = work / ENV
    pyproject = project / "pyproject.toml"
    # keys that a regex bump would clobber (the public CLI's bug): they must survive
    pyproject.write_text(
        pyproject.read_text() + '\n[tool.ruff]\ntarget-version = "py311"\n'
        '\n[tool.other]\nmin_version = "1.0"\n'
    )
    first = alice("env", "push", project).ok()
    assert f"published {REF} 0.1.0" in first.out, first.out
    before = pyproject.read_text()
    second = alice("env", "push", project, "--bump", "patch").ok()
    assert f"published {REF} 0.1.1" in second.out
    after = pyproject.read_text()
    changed = [
        (a, b) for a, b in zip(before.splitlines(), after.splitlines(), strict=True) if a != b
    ]
    assert changed == [('version = "0.1.0"', 'version = "0.1.1"')]
    return project
