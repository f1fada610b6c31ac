"""A real environment package, built with a PEP 517 backend, published with twine and
``uv publish``, then installed with pip and with uv into fresh virtual environments."""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from prime_hub_testkit import clean_env


def _uv() -> str:
    found = shutil.which("uv")
    assert found, "uv must be on PATH (make bootstrap installs it)"
    return found


def _project(root: Path, name: str, version: str, deps: list[str]) -> Path:
    mod = name.replace("-", "_")
    d = root / name
    (d / "src" / mod).mkdir(parents=True)
    (d / "README.md").write_text(f"# {name}\n\nAn environment for the hub tests.\n")
    (d / "src" / mod / "__init__.py").write_text(
        textwrap.dedent(
            f"""
            def load_environment(**kwargs):
                return {{"name": {name!r}, "version": {version!r}, **kwargs}}
            """
        )
    )
    dep_list = ", ".join(f'"{x}"' for x in deps)
    (d / "pyproject.toml").write_text(
        textwrap.dedent(
            f"""
            [project]
            name = "{name}"
            version = "{version}"
            description = "hub e2e {name}"
            readme = "README.md"
            requires-python = ">=3.10"
            keywords = ["e2e"]
            dependencies = [{dep_list}]

            [build-system]
            requires = ["hatchling"]
            build-backend = "hatchling.build"

            [tool.hatch.build.targets.wheel]
            packages = ["src/{mod}"]
            """
        )
    )
    return d


def _build(project: Path) -> list[Path]:
    out = project / "dist"
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(project)],
        check=True,
        capture_output=True,
    )
    return sorted(out.iterdir())


NAME = "hubtest-env"
HELPER = "hubtest-helper"


@pytest.fixture(scope="session")
def dists(tmp_path_factory) -> tuple[list[Path], list[Path]]:
    root = tmp_path_factory.mktemp("e2e-projects")
    dep = _project(root, HELPER, "0.3.0", [])
    env = _project(root, NAME, "1.2.0", [f"{HELPER}>=0.2"])
    return _build(dep), _build(env)


def _twine(server, token, files) -> subprocess.CompletedProcess:  # type: ignore[no-untyped-def]
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "twine",
            "upload",
            "--disable-progress-bar",
            "--non-interactive",
            "--repository-url",
            f"{server.url}/legacy/",
            "-u",
            "__token__",
            "-p",
            token,
            *map(str, files),
        ],
        capture_output=True,
        env=clean_env(),
        text=True,
    )


def _publish_all(server, token, dists) -> None:  # type: ignore[no-untyped-def]
    dep_files, env_files = dists
    # uv publish for the dependency, twine for the environment (wheel + sdist)
    subprocess.run(
        [
            _uv(),
            "publish",
            "--publish-url",
            f"{server.url}/legacy/",
            "--token",
            token,
            *map(str, dep_files),
        ],
        check=True,
        capture_output=True,
        env=clean_env(),
    )
    r = _twine(server, token, env_files)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.fixture(scope="module")
def published(server, dists):
    owner, token = server.new_user("e2e")
    _publish_all(server, token, dists)
    # twine again: identical files are accepted idempotently
    again = _twine(server, token, dists[1])
    assert again.returncode == 0, again.stdout + again.stderr
    return owner, token, NAME, dists[1]


def _check_import(python: Path, name: str) -> None:
    mod = name.replace("-", "_")
    out = subprocess.run(
        [
            str(python),
            "-c",
            f"import {mod}, {mod.replace('_env', '_helper')}; print({mod}.load_environment()['version'])",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    assert out.stdout.strip() == "1.2.0"


def _uv_venv(venv: Path) -> Path:
    """A fresh virtual environment made by uv; returns its python."""
    subprocess.run([_uv(), "venv", "-q", str(venv)], check=True, env=clean_env())
    return venv / "bin" / "python"


def _uv_pip_install(python: Path, index_url: str, *what: str) -> subprocess.CompletedProcess:
    """`uv pip install` of `what` into `python`'s environment from `index_url` only."""
    return subprocess.run(
        [_uv(), "pip", "install", "--python", str(python), "--index-url", index_url, *what],
        capture_output=True,
        text=True,
        env=clean_env(),
    )


def _printed_commands(server, owner: str, name: str) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """The install commands the environment's web page prints, by program."""
    with server.client() as c:
        page = c.get(f"/{owner}/{name}").text
    block = re.search(r'<pre id="install">(.*?)</pre>', page, re.S)
    assert block, "the page has no install block"
    lines = html.unescape(block.group(1)).splitlines()
    return {line.split()[0]: line for line in lines if not line.startswith("#")}


def _run_verbatim(line: str, venv: Path) -> subprocess.CompletedProcess:
    """One printed command, run as printed inside `venv` (as if activated)."""
    env = clean_env() | {"VIRTUAL_ENV": str(venv), "PATH": f"{venv / 'bin'}:{os.environ['PATH']}"}
    return subprocess.run(["bash", "-c", line], capture_output=True, text=True, env=env)


def test_pip_installs_environment_with_dependencies(server, published, tmp_path):
    owner, _token, name, _files = published
    line = _printed_commands(server, owner, name)["pip"]
    assert line == f"pip install --index-url {server.url}/{owner}/simple/ {name}"
    venv = tmp_path / "pip-venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    r = _run_verbatim(line, venv)
    assert r.returncode == 0, r.stdout + r.stderr
    _check_import(venv / "bin" / "python", name)
    # the download was counted (counts are written in batches, about once a second)
    server.hub.downloads.flush()
    with server.client() as c:
        info = c.get(f"/api/v1/environments/{owner}/{name}").json()
    assert info["downloads"] >= 1


def test_uv_installs_environment_with_dependencies(server, published, tmp_path):
    owner, _token, name, _files = published
    line = _printed_commands(server, owner, name)["uv"]
    assert line == f"uv pip install --default-index {server.url}/{owner}/simple/ {name}"
    python = _uv_venv(tmp_path / "uv-venv")
    r = _run_verbatim(line, python.parent.parent)
    assert r.returncode == 0, r.stdout + r.stderr
    _check_import(python, name)


def test_uv_installs_private_environment_with_token_and_hashes(server, dists, tmp_path):
    owner, token = server.new_user("private")
    name = NAME
    _publish_all(server, token, dists)  # the same files under another owner: names are per owner
    helper = name.replace("-env", "-helper")
    with server.client(token) as c:
        for env in (name, helper):
            private = {"visibility": "private"}
            assert c.patch(f"/api/v1/environments/{owner}/{env}", json=private).status_code == 200
        versions = c.get(f"/api/v1/environments/{owner}/{name}/versions").json()["versions"]
        hv = c.get(f"/api/v1/environments/{owner}/{helper}/versions").json()["versions"]
    wheel_sha = next(f["sha256"] for f in versions[0]["files"] if f["kind"] == "wheel")
    helper_sha = next(f["sha256"] for f in hv[0]["files"] if f["kind"] == "wheel")
    req = tmp_path / "requirements.txt"
    req.write_text(
        f"{name}==1.2.0 --hash=sha256:{wheel_sha}\n{helper}==0.3.0 --hash=sha256:{helper_sha}\n"
    )
    python = _uv_venv(tmp_path / "uv-private")
    anon = _uv_pip_install(python, f"{server.url}/{owner}/simple/", name)
    assert anon.returncode != 0  # invisible without a token
    host = server.url.removeprefix("http://")
    with_token = f"http://__token__:{token}@{host}/{owner}/simple/"
    r = _uv_pip_install(python, with_token, "--require-hashes", "-r", str(req))
    assert r.returncode == 0, r.stdout + r.stderr
    _check_import(python, name)
