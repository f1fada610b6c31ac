"""The public ``prime`` CLI from PyPI, unmodified, against a real hub.

The CLI runs from its own venv (bench/public_prime_cli.py builds and caches it: it shares the
distribution and import names with our CLI, so it never enters the workspace .venv). It is
pointed at the hub the documented ways: ``prime config set-base-url/set-frontend-url/
set-api-key`` in one test, the ``PRIME_API_BASE_URL``/``PRIME_FRONTEND_URL``/``PRIME_API_KEY``
variables in the others. Every ``prime env`` command of 0.18 runs (of the ``secret`` and
``var`` groups, whose every call gets the same answer, ``list``; the hidden, deprecated
``action`` group talks to no hub), plus ``whoami``, ``login`` and ``config``. Builds and
installs are real (``uv build``, ``uv pip install`` from the hub's index into a scratch venv).
Each test runs on one deployment (the CLI's starts cost seconds each); the HTTP replay in
test_compat.py covers both.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from prime_hub_testkit import HubServer

ROOT = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location(
    "public_prime_cli", ROOT / "bench" / "public_prime_cli.py"
)
assert _spec and _spec.loader
public_prime_cli = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(public_prime_cli)

API = "/api/v1/environmentshub"
PASS_THROUGH = ("PATH", "LANG", "LC_ALL", "SSL_CERT_FILE", "SSL_CERT_DIR")


@pytest.fixture(scope="session")
def prime_exe() -> Path:
    return public_prime_cli.ensure()


@pytest.fixture(scope="session")
def uv_dir() -> str:
    """The folder of a `uv` binary: the CLI runs `uv build` and `uv pip` from PATH."""
    found = shutil.which("uv")
    if found is None:
        from uv import find_uv_bin  # the uv package of the workspace venv

        found = find_uv_bin()
    return str(Path(found).parent)


@dataclass
class Prime:
    """One user's `prime`: its own HOME (so its own ~/.prime/config.json) and variables."""

    exe: Path
    home: Path
    env: dict[str, str] = field(default_factory=dict)

    def __call__(self, *args: str, cwd: Path | None = None, ok: bool = True) -> str:
        r = subprocess.run(
            [str(self.exe), *args],
            cwd=cwd or self.home,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=240,
            stdin=subprocess.DEVNULL,
        )
        out = r.stdout + r.stderr
        assert (r.returncode == 0) == ok, f"prime {' '.join(args)} -> {r.returncode}\n{out}"
        return out


@pytest.fixture
def prime_for(prime_exe: Path, uv_dir: str, tmp_path: Path):
    def make(name: str, hub: HubServer | None = None, token: str | None = None) -> Prime:
        home = tmp_path / name
        home.mkdir()
        target = tmp_path / f"{name}-venv"  # where `prime env install` installs
        env = {k: os.environ[k] for k in PASS_THROUGH if k in os.environ}
        env.update({k: v for k, v in os.environ.items() if k.startswith(("UV_", "PIP_"))})
        env.update(
            PATH=f"{uv_dir}{os.pathsep}{env.get('PATH', '')}",
            HOME=str(home),
            PRIME_DISABLE_VERSION_CHECK="1",  # no PyPI check before every command
            COLUMNS="250",  # rich tables on one line each
            NO_COLOR="1",
            TERM="dumb",
            UV_PROJECT_ENVIRONMENT=str(target),
            VIRTUAL_ENV=str(target),  # `prime env uninstall` runs a bare `uv pip uninstall`
        )
        if hub is not None:
            env.update(PRIME_API_BASE_URL=hub.url, PRIME_FRONTEND_URL=hub.url)
        if token is not None:
            env["PRIME_API_KEY"] = token
        subprocess.run(["uv", "venv", "-q", str(target)], env=env, check=True)
        return Prime(prime_exe, home, env)

    return make


def _env_folder(root: Path, name: str, marker: str) -> Path:
    mod = name.replace("-", "_")
    d = root / mod
    (d / "data").mkdir(parents=True)
    (d / "pyproject.toml").write_text(
        f'[project]\nname = "{name}"\nversion = "0.1.0"\ndescription = "CLI test env"\n'
        'tags = ["cli"]\nrequires-python = ">=3.8"\ndependencies = []\n\n'
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n\n'
        f'[tool.hatch.build]\ninclude = ["{mod}.py"]\n'
    )
    (d / "README.md").write_text(f"# {name}\n\nA test environment.\n")
    (d / f"{mod}.py").write_text(
        f"MARKER = {marker!r}\n\ndef load_environment():\n    return MARKER\n"
    )
    (d / "data" / "rows.jsonl").write_text('{"q": "1+1", "a": "2"}\n')
    return d


def _marker(p: Prime, module: str) -> str:
    """What the target venv imports (run outside the source folder, which would shadow it)."""
    r = subprocess.run(
        [p.env["VIRTUAL_ENV"] + "/bin/python", "-c", f"import {module}; print({module}.MARKER)"],
        capture_output=True,
        text=True,
        cwd=p.home,
    )
    return r.stdout.strip() if r.returncode == 0 else f"<not importable: {r.stderr.strip()[-200:]}>"


@pytest.mark.parametrize("server", ["sqlite"], indirect=True)
def test_public_cli_config_whoami_and_login(server: HubServer, user, prime_for) -> None:
    owner, token = user
    prime = prime_for("cfg")
    prime("config", "set-base-url", server.url)
    prime("config", "set-frontend-url", server.url)
    out = prime("config", "set-api-key", token)
    assert "configured successfully" in out
    saved = json.loads((prime.home / ".prime" / "config.json").read_text())
    assert saved["base_url"] == server.url and saved["api_key"] == token
    assert saved["user_id"]  # set-api-key asked whoami who this is
    view = prime("config", "view")
    assert server.url in view and token[:6] in view and token not in view
    who = prime("whoami")
    assert owner in who and "Token Permissions" in who
    assert "environments" in who and "✓" in who  # read ✓ write ✓ for a publish token
    # login: no browser flow here; the CLI prints the hub's answer and fails
    out = prime("login", "--headless", ok=False)
    assert "Failed to generate challenge" in out and "set-api-key" in out
    assert f"{server.url}/settings/tokens" in out.replace("\n", "")


# The CLI's behaviour does not depend on the deployment, and each of its starts costs seconds;
# so each test runs on one. This one on PostgreSQL + S3, where the CLI PUTs to presigned S3 URLs.
@pytest.mark.parametrize("server", ["postgres"], indirect=True)
@pytest.mark.timeout(600)  # ~20 CLI starts, two builds, two installs: slow on a busy machine
def test_public_cli_every_env_command(server: HubServer, user, uid, prime_for, tmp_path) -> None:
    owner, token = user
    prime = prime_for("author", server, token)
    name, mod = f"{uid}-env", f"{uid}_env"
    ref = f"{owner}/{name}"
    src = _env_folder(tmp_path / "work", name, "v1")

    out = prime("env", "push", "--path", str(src), "-v", "PUBLIC", cwd=src.parent)
    assert f"Successfully pushed {ref}" in out
    meta = json.loads((src / ".prime" / ".env-metadata.json").read_text())
    assert (meta["owner"], meta["name"], meta["version"]) == (owner, name, "0.1.0")
    link = next(w for w in out.split() if "/dashboard/environments/" in w)
    assert link == f"{server.url}/dashboard/environments/{ref}"
    page = httpx.get(link, follow_redirects=True)
    assert page.status_code == 200 and str(page.url) == f"{server.url}/{ref}" and name in page.text

    listed = json.loads(prime("env", "list", "--owner", owner, "--output", "json"))
    assert [(e["environment"], e["version"]) for e in listed["environments"]] == [(ref, "0.1.0")]
    assert listed["environments"][0]["tags"] == ["cli"] and listed["total"] == 1
    status = prime("env", "status", ref)
    assert "Visibility: PUBLIC" in status and "Version: 0.1.0" in status
    info = prime("env", "info", ref)
    assert f"--extra-index-url {server.url}/{owner}/simple/" in info
    assert f"prime env inspect {ref}@latest README.md" in info

    # inspect: what `info` suggests, a folder, a file, truncation, JSON output, a bad path
    tree = prime("env", "inspect", f"{ref}@0.1.0")
    for row in (
        "│ dir  │ data ",
        "│ file │ README.md",
        f"│ file │ {mod}.py",
        "│ file │ pyproject.toml",
    ):
        assert row in tree, tree
    assert f"prime env inspect {ref}@0.1.0 README.md" in tree
    assert "A test environment." in prime("env", "inspect", f"{ref}@latest", "README.md")
    cut = prime("env", "inspect", ref, f"{mod}.py", "--max-bytes", "8")
    assert "MARKER =" in cut and "Output truncated" in cut and "load_environment" not in cut
    as_json = json.loads(prime("env", "inspect", ref, "data/rows.jsonl", "-o", "json"))
    assert as_json["kind"] == "file" and as_json["content"] == (src / "data/rows.jsonl").read_text()

    # a second version: --auto-bump rewrites pyproject.toml to 0.1.1
    (src / f"{mod}.py").write_text((src / f"{mod}.py").read_text().replace("v1", "v2"))
    assert f"Successfully pushed {ref}" in prime("env", "push", "--path", str(src), "--auto-bump")
    with server.client(token) as c:
        hashes = {
            v["version"]: v["content_hash"]
            for v in c.get(f"{API}/{ref}/versions").json()["data"]["versions"]
        }
    versions = prime("env", "version", "list", ref)
    lines = [ln for ln in versions.splitlines() if "artifacts" in ln]
    assert [ln.split("│")[1].strip() for ln in lines] == ["0.1.1", "0.1.0"]
    for ln, v in zip(lines, ("0.1.1", "0.1.0"), strict=True):
        assert hashes[v][:8] in ln and "2 artifacts" in ln
    assert f"Install with: prime env install {ref}@0.1.1" in versions

    # install (from the hub's index into the scratch venv), pull, uninstall
    prime("env", "install", f"{ref}@0.1.0")
    assert _marker(prime, mod) == "v1"
    prime("env", "install", ref)
    assert _marker(prime, mod) == "v2"
    pulled = tmp_path / "pulled"
    out = prime("env", "pull", f"{ref}@0.1.0", "-t", str(pulled))
    assert "Environment pulled" in out
    assert (pulled / f"{mod}.py").read_text().count("v1") == 1
    assert (pulled / "data" / "rows.jsonl").read_text() == (src / "data/rows.jsonl").read_text()
    assert json.loads((pulled / ".prime" / ".env-metadata.json").read_text())["version"] == "0.1.0"
    prime("env", "uninstall", ref)
    assert _marker(prime, mod).startswith("<not importable")

    # secrets and variables belong to the hosted platform: a plain answer, not a crash
    for group in ("secret", "var"):
        out = prime("env", group, "list", ref, ok=False)
        assert "HTTP 501" in out and "this hub keeps no" in out

    # delete one version by the content hash the list shows, then the whole environment
    out = prime("env", "version", "delete", ref, hashes["0.1.0"][:8], "-f")
    assert "deleted successfully" in out
    with server.client(token) as c:
        left = c.get(f"{API}/{ref}/versions").json()["data"]["versions"]
        assert [v["version"] for v in left] == ["0.1.1"]
        assert "deleted successfully" in prime("env", "delete", ref, "-f")
        assert c.get(f"{API}/{ref}/@latest").status_code == 404


# the access rules themselves are attacked over both deployments in test_compat
@pytest.mark.parametrize("server", ["sqlite"], indirect=True)
def test_public_cli_private_environment(server: HubServer, user, uid, prime_for, tmp_path) -> None:
    owner, token = user
    _, outsider_token = server.new_user("out")
    name, mod = f"{uid}-secret", f"{uid}_secret"
    ref = f"{owner}/{name}"
    author = prime_for("owner", server, token)
    src = _env_folder(tmp_path / "work", name, "private-v1")
    author("env", "push", "--path", str(src), "-v", "PRIVATE")

    info = author("env", "info", ref)
    assert "Install (private environment)" in info and f"prime env pull {ref}@latest" in info
    assert "A test environment." in author("env", "inspect", ref, "README.md")
    # no index for private environments: the CLI downloads the source with its key and builds
    author("env", "install", ref)
    assert _marker(author, mod) == "private-v1"

    anon = prime_for("anon", server)
    assert "HTTP 404" in anon("env", "inspect", ref, "README.md", ok=False)
    assert "HTTP 404" in anon("env", "pull", ref, "-t", str(tmp_path / "anon-pull"), ok=False)
    assert not (tmp_path / "anon-pull" / "README.md").exists()
    outsider = prime_for("outsider", server, outsider_token)
    assert "HTTP 404" in outsider("env", "inspect", ref, ok=False)
    assert "HTTP 404" in outsider("env", "version", "list", ref, ok=False)
    assert "Failed to delete" in outsider("env", "delete", ref, "-f", ok=False)
    assert "Version: 0.1.0" in author("env", "status", ref)  # still there
