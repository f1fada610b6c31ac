"""Install safety: the hub answers every name it hosts, on every install path it offers.

Two real indexes. A real hub process whose upstream pass-through points at a second real PEP 503
index standing in for PyPI (a static folder served over HTTP that logs every request). The
stand-in offers HIGHER versions of every name the hub hosts (the environment, its same-owner
helper, a dependency another owner publishes, a private dependency) and one package the hub
does not host. Every install command printed on the environment and owner pages, read from the
page rendered in a real browser and run verbatim in a fresh virtualenv, and `prime env install`
with uv and with pip, must install the hub's copies, take only the other package from the
stand-in, and never send the stand-in a hosted name or a token.

One deployment (SQLite + folder) suffices here: which names the hub answers is decided by one
query and one rule (prime_hub/index_routing.py) whose behaviour on PostgreSQL + S3 is checked
by packages/hub-server/tests/test_simple_api.py, and the S3 file redirects pip and uv follow by
test_install_e2e.py, both against both deployments.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from e2e_kit import (
    ROOT,
    Hub,
    StaticIndex,
    base_env,
    free_port,
    running_hub,
    serving,
    uv,
    wheel_bytes,
)
from selenium import webdriver
from selenium.webdriver.common.by import By

from verifiers.testing import chromium

OWNER, LIB = "iso", "isolib"  # the environment's owner; another owner the env depends on
ENV_NAME, HELPER, SHARED, ONLY = "ws-count", "ws-helper", "ws-shared", "ws-upstream-only"
SECRET, SECRET_DEP = "ws-secret", "ws-secret-dep"  # private, both
NAMES = (ENV_NAME, HELPER, SHARED, ONLY)
EXPECTED = {
    ENV_NAME: ["1.0.0", "hub"],
    HELPER: ["1.0.0", "hub"],
    SHARED: ["1.0.0", "hub"],
    ONLY: ["1.0.0", "upstream"],
}


def _body(origin: str) -> str:
    return f"ORIGIN = {origin!r}\n\ndef load_environment(**kw):\n    return ORIGIN\n"


@dataclass
class Upstream:
    index: StaticIndex
    log: Path

    def take_log(self) -> list[tuple[str, str]]:
        """(path, Authorization) of every request since the last call."""
        lines = self.log.read_text().splitlines() if self.log.exists() else []
        self.log.write_text("")
        return [tuple(line.split("\t", 1)) for line in lines]  # type: ignore[misc]

    def assert_saw_only_unhosted_names(self) -> None:
        seen = self.take_log()
        assert seen, "nothing reached the upstream: the non-hosted dependency came from elsewhere"
        for path, auth in seen:
            assert auth == "-", f"a credential reached the upstream: {path} {auth}"
            assert ONLY.replace("-", "_") in path or f"/simple/{ONLY}/" in path, (
                f"the upstream was asked for a name the hub hosts: {path}"
            )


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Upstream]:
    root = tmp_path_factory.mktemp("upstream-index")
    (root / "simple").mkdir()
    index = StaticIndex("", root)
    for name in (ENV_NAME, HELPER, SHARED, SECRET, SECRET_DEP):  # higher versions: impostors
        index.add(name, "9.0.0", wheel_bytes(name, "9.0.0", _body("impostor")))
    index.add(ONLY, "1.0.0", wheel_bytes(ONLY, "1.0.0", _body("upstream")))
    log = root.parent / f"{root.name}.log"
    port = free_port()
    server = Path(__file__).with_name("logging_index_server.py")
    with serving([sys.executable, str(server), str(port), str(root), str(log)], port):
        index.url = f"http://127.0.0.1:{port}/simple/"
        yield Upstream(index, log)


def _hub(data: Path, upstream_url: str) -> contextlib.AbstractContextManager[Hub]:
    # the admin allows the names the stand-in also serves (that is the point of this test)
    return running_hub(
        data,
        PRIME_HUB_UPSTREAM_INDEX_URL=upstream_url,
        PRIME_HUB_ALLOWED_UPSTREAM_NAMES='["ws-*"]',
    )


def _publish(hub: Hub, owner: str, name: str, deps: list[str], private: bool = False) -> None:
    filename = f"{name.replace('-', '_')}-1.0.0-py3-none-any.whl"
    data = wheel_bytes(name, "1.0.0", _body("hub"), deps)
    r = httpx.post(
        f"{hub.url}/api/v1/environments/{owner}/{name}/versions",
        headers={"Authorization": f"Bearer {hub.user(owner)}"},
        files=[("files", (filename, data, "application/octet-stream"))],
        data={"visibility": "private"} if private else {},
        timeout=60,
    )
    assert r.status_code == 201, r.text


def _populate(hub: Hub) -> None:
    _publish(hub, LIB, SHARED, [])
    _publish(hub, OWNER, HELPER, [])
    _publish(hub, OWNER, ENV_NAME, [HELPER, SHARED, ONLY])
    _publish(hub, OWNER, SECRET_DEP, [], private=True)
    _publish(hub, OWNER, SECRET, [SECRET_DEP, ONLY], private=True)


@pytest.fixture(scope="module")
def safe_hub(upstream: Upstream, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    """The hub, with its pass-through pointing at the stand-in."""
    with _hub(tmp_path_factory.mktemp("safe-hub"), upstream.index.url) as hub:
        _populate(hub)
        yield hub


@pytest.fixture(scope="module")
def airgapped_hub(upstream: Upstream, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    """A hub without a pass-through."""
    with _hub(tmp_path_factory.mktemp("airgapped-hub"), "") as hub:
        _populate(hub)
        yield hub


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    with chromium() as drv:
        yield drv


def _printed(browser: webdriver.Chrome, url: str) -> list[str]:
    """The lines of the page's install block, as the browser shows them."""
    browser.get(url)
    return browser.find_element(By.ID, "install").text.splitlines()


def _venv(tmp_path: Path, name: str, pip: bool) -> Path:
    venv = tmp_path / name
    cmd = [uv(), "venv", "-q", *(["--seed"] if pip else []), str(venv)]
    subprocess.run(cmd, check=True, env=base_env(), capture_output=True)
    return venv


def _shell(
    line: str, venv: Path, home: Path, hub: Hub, **extra: str
) -> subprocess.CompletedProcess[str]:
    """Run one printed command verbatim in `venv` (activated the way `activate` does it)."""
    env = base_env() | {
        "VIRTUAL_ENV": str(venv),
        "PRIME_HUB_URL": hub.url,
        "PRIME_CONFIG_DIR": str(home / "config"),
        "PRIME_CACHE_DIR": str(home / "cache"),
        # no caches: what each install fetches, and from where, is what the test looks at
        "UV_NO_CACHE": "1",
        "PIP_NO_CACHE_DIR": "1",
    }
    env["PATH"] = f"{venv / 'bin'}:{env['PATH']}"
    env.update(extra)
    if "UV_CONFIG_FILE" in extra:  # a test's hostile uv configuration is to be read
        env.pop("UV_NO_CONFIG", None)
    return subprocess.run(
        ["bash", "-c", line], env=env, capture_output=True, text=True, timeout=300
    )


def _installed(venv: Path, names: tuple[str, ...] = NAMES) -> dict[str, list[str]]:
    """name -> [installed version, the ORIGIN marker of its module]."""
    code = (
        "import importlib, importlib.metadata as m, json, sys\n"
        "print(json.dumps({n: [m.version(n), importlib.import_module(n.replace('-', '_')).ORIGIN]"
        " for n in sys.argv[1:]}))"
    )
    r = subprocess.run(
        [str(venv / "bin" / "python"), "-c", code, *names], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("page", ["environment", "owner"])
@pytest.mark.parametrize("tool", ["prime", "uv", "pip"])
def test_every_printed_install_command_installs_the_hubs_copies(
    safe_hub, upstream, browser, tmp_path, page, tool
):
    url = (
        f"{safe_hub.url}/{OWNER}/{ENV_NAME}" if page == "environment" else f"{safe_hub.url}/{OWNER}"
    )
    lines = _printed(browser, url)
    assert [line.split()[0] for line in lines] == ["prime", "uv", "pip"], lines
    (line,) = [x for x in lines if x.split()[0] == tool]
    assert safe_hub.url in line or tool == "prime"
    venv = _venv(tmp_path, "venv", pip=tool == "pip")
    upstream.take_log()
    r = _shell(line, venv, tmp_path, safe_hub)
    assert r.returncode == 0, f"{line}\n{r.stdout}\n{r.stderr}"
    assert _installed(venv) == EXPECTED
    upstream.assert_saw_only_unhosted_names()


HOSTILE_PIP_CONF = "[global]\nextra-index-url = {url}\nfind-links = {files}\n"


@pytest.mark.parametrize("tool", ["uv", "pip"])
def test_prime_env_install_ignores_indexes_the_user_configured(safe_hub, upstream, tmp_path, tool):
    """Every way pip and uv can be told about another index points at the stand-in: the CLI
    still installs the hub's copy of every hosted name."""
    url = upstream.index.url
    conf = tmp_path / "pip.conf"
    conf.write_text(HOSTILE_PIP_CONF.format(url=url, files=upstream.index.root / "files"))
    uv_toml = tmp_path / "uv.toml"
    uv_toml.write_text(f'[[index]]\nurl = "{url}"\n\n[pip]\nindex-strategy = "unsafe-best-match"\n')
    hostile = {
        "UV_INDEX": url, "UV_EXTRA_INDEX_URL": url, "UV_DEFAULT_INDEX": url,
        "UV_INDEX_URL": url, "UV_FIND_LINKS": str(upstream.index.root / "files"),
        "UV_INDEX_STRATEGY": "unsafe-best-match", "UV_CONFIG_FILE": str(uv_toml),
        "PIP_INDEX_URL": url, "PIP_EXTRA_INDEX_URL": url, "PIP_CONFIG_FILE": str(conf),
    }  # fmt: skip
    venv = _venv(tmp_path, "venv", pip=tool == "pip")
    upstream.take_log()
    r = _shell(
        f"prime env install {OWNER}/{ENV_NAME} --with {tool}", venv, tmp_path, safe_hub, **hostile
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"installed {OWNER}/{ENV_NAME} 1.0.0" in r.stdout and f"with {tool}" in r.stdout
    assert _installed(venv) == EXPECTED
    upstream.assert_saw_only_unhosted_names()


def test_private_dependencies_come_from_the_hub_and_never_reach_the_upstream(
    safe_hub, upstream, tmp_path
):
    token = safe_hub.user(OWNER)
    # without a token the private names are "not found" on the hub: never the stand-in's 9.0.0
    venv = _venv(tmp_path, "anon", pip=True)
    upstream.take_log()
    line = f"pip install --index-url {safe_hub.url}/{OWNER}/simple/ {SECRET_DEP}"
    anon = _shell(line, venv, tmp_path, safe_hub)
    assert anon.returncode != 0 and "9.0.0" not in anon.stdout
    assert upstream.take_log() == []
    # with one, prime installs the hub's private copies; the token goes to the hub only
    venv = _venv(tmp_path, "owner", pip=False)
    r = _shell(f"prime env install {OWNER}/{SECRET}", venv, tmp_path, safe_hub, PRIME_TOKEN=token)
    assert r.returncode == 0, r.stdout + r.stderr
    assert _installed(venv, (SECRET, SECRET_DEP, ONLY)) == {
        SECRET: ["1.0.0", "hub"],
        SECRET_DEP: ["1.0.0", "hub"],
        ONLY: ["1.0.0", "upstream"],
    }
    upstream.assert_saw_only_unhosted_names()


def test_control_the_stand_in_would_win_an_extra_index_install(safe_hub, upstream, tmp_path):
    """Without the pass-through, the usual `--extra-index-url` form picks the stand-in's higher
    versions: the checks above would fail if the hub's commands were that form."""
    venv = _venv(tmp_path, "plain", pip=True)
    line = (
        f"pip install --index-url {safe_hub.url}/{OWNER}/simple/ "
        f"--extra-index-url {upstream.index.url} {ENV_NAME}"
    )
    r = _shell(line, venv, tmp_path, safe_hub)
    assert r.returncode == 0, r.stderr
    assert _installed(venv, (ENV_NAME,)) == {ENV_NAME: ["9.0.0", "impostor"]}


def test_airgapped_hub_prints_uv_priority_and_no_pip_command(
    airgapped_hub, upstream, browser, tmp_path
):
    """Without a pass-through the page offers uv with the hub first (`first-index`) and says
    why there is no pip command; run verbatim, with the stand-in as the user's default index,
    the uv command installs the hub's copies. `prime env install` does the same with uv, and
    with pip (hub only) stops with a clear line instead of guessing."""
    hub = airgapped_hub
    for url in (f"{hub.url}/{OWNER}/{ENV_NAME}", f"{hub.url}/{OWNER}"):
        lines = _printed(browser, url)
        assert lines[0] == f"prime env install {OWNER}/{ENV_NAME}"
        assert lines[1] == (
            f"uv pip install --index {hub.url}/{OWNER}/simple/ --index-strategy first-index "
            f"{ENV_NAME}"
        )
        assert lines[2].startswith("# pip cannot prefer one index over another")
        assert len(lines) == 3
    default = {"UV_DEFAULT_INDEX": upstream.index.url}  # the user's own default index
    for n, line in enumerate((lines[1], f"prime env install {OWNER}/{ENV_NAME} --with uv")):
        venv = _venv(tmp_path, f"uv{n}", pip=False)
        r = _shell(line, venv, tmp_path, hub, **default)
        assert r.returncode == 0, f"{line}\n{r.stdout}\n{r.stderr}"
        assert _installed(venv) == EXPECTED
    upstream.take_log()  # (uv asks the default index only for names the hub does not have)
    venv = _venv(tmp_path, "pip", pip=True)
    r = _shell(f"prime env install {OWNER}/{ENV_NAME} --with pip", venv, tmp_path, hub)
    assert r.returncode == 1 and "pip cannot prefer the hub over another index" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_the_docs_show_the_commands_the_pages_print():
    from prime_hub.views import install_commands

    hub_md = (ROOT / "docs" / "operations" / "hub.md").read_text()
    tutorial = (ROOT / "docs" / "tutorials" / "publishing.md").read_text()
    for pass_through in (True, False):
        lines = install_commands("https://hub.example.org", "owner", "my-env", pass_through)
        for line in lines:
            if not line.startswith("#"):
                assert line in hub_md, line
    for line in install_commands("https://hub.example.org", "owner", "my-env", True)[1:]:
        assert line in tutorial, line
