"""Who can install what, and from where: private environments need a token that grants them,
and a same-named package on another index never replaces the hub's."""

from __future__ import annotations

import subprocess

import pytest
from e2e_kit import StaticIndex, base_env, installed_version, run_py, uv, wheel_bytes
from packaging.utils import parse_wheel_filename

SECRET = "e2e-secret"


@pytest.fixture(scope="module")
def private_env(prime_as, tmp_path_factory) -> str:  # type: ignore[no-untyped-def]
    carol = prime_as("carol")
    work = tmp_path_factory.mktemp("private")
    carol("env", "init", SECRET, "--path", work).ok()
    carol("env", "push", work / SECRET, "--visibility", "private").ok()
    return f"carol/{SECRET}"


def test_private_environment_installs_only_with_a_granting_token(
    prime_as, hub, private_env, shared_venv
):
    anon, dave = prime_as(None), prime_as("dave")
    for who in (anon, dave):
        r = who("env", "install", private_env, "--python", shared_venv)
        assert r.rc == 1 and r.err.startswith(f"error: environment {private_env} not found"), r.err
        assert len(r.err.strip().splitlines()) == 1
    assert installed_version(shared_venv, SECRET) is None
    # the listing does not show it either
    assert private_env not in anon("env", "list", "--json").ok().out

    # a read-only token limited to this one environment is enough
    scoped = hub.admin("create-token", "carol", "--scope", "read", "--environment", private_env)
    r = anon("env", "install", private_env, "--python", shared_venv, PRIME_TOKEN=scoped).ok()
    assert f"installed {private_env} 0.1.0" in r.out
    assert installed_version(shared_venv, SECRET) == "0.1.0"
    # ...and it grants nothing more: changing the environment with it is refused
    yank = anon("env", "yank", f"{private_env}@0.1.0", PRIME_TOKEN=scoped)
    assert yank.rc == 1 and yank.err.startswith("error: not allowed"), yank.err

    # the owner deletes it; then nobody finds it
    carol = prime_as("carol")
    assert (
        "deleted carol/e2e-secret and all its versions"
        in carol("env", "delete", private_env, "--yes").ok().out
    )
    gone = carol("env", "info", private_env)
    assert gone.rc == 1 and "not found" in gone.err


@pytest.fixture(scope="module")
def impostor(other_index: StaticIndex, published) -> StaticIndex:  # type: ignore[no-untyped-def]
    """The other index offers higher versions of the hub environment and of verifiers."""
    evil = "def load_environment(**kw):\n    raise SystemExit('IMPOSTOR')\nIMPOSTOR = True\n"
    other_index.add("e2e-arith", "99.0.0", wheel_bytes("e2e-arith", "99.0.0", evil))
    other_index.add("verifiers", "99.0.0", wheel_bytes("verifiers", "99.0.0", "IMPOSTOR = True\n"))
    return other_index


@pytest.mark.parametrize("tool", ["uv", "pip"])
def test_same_named_package_on_another_index_cannot_replace_it(
    prime_as, impostor, shared_venv, verifiers_wheel, tool
):
    # the user's installer is configured to prefer the other index for everything
    hostile = {
        "UV_INDEX_URL": impostor.url,
        "UV_DEFAULT_INDEX": impostor.url,
        "UV_EXTRA_INDEX_URL": impostor.url,
        "PIP_INDEX_URL": impostor.url,
        "PIP_EXTRA_INDEX_URL": impostor.url,
    }
    anon = prime_as(None)
    anon("env", "uninstall", "alice/e2e-arith", "--python", shared_venv).ok()
    r = anon(
        "env", "install", "alice/e2e-arith", "--python", shared_venv, "--with", tool, **hostile
    )
    r.ok()
    assert installed_version(shared_venv, "e2e-arith") == "0.1.1"
    sdk = str(parse_wheel_filename(verifiers_wheel.name)[1])
    assert installed_version(shared_venv, "verifiers") == sdk
    check = run_py(
        shared_venv,
        "import e2e_arith, verifiers; print(hasattr(e2e_arith, 'IMPOSTOR'), hasattr(verifiers, 'IMPOSTOR'))",
    )
    assert check.stdout.strip() == "False False", check.stderr


def test_the_impostor_index_really_would_win_a_plain_install(hub, impostor, tmp_path):
    """Control: the usual `--extra-index-url` install does pick the impostor's 99.0.0, so the
    test above would fail if prime installed by name."""
    venv = tmp_path / "plain"
    subprocess.run([uv(), "venv", "-q", "--seed", str(venv)], check=True, env=base_env())
    python = venv / "bin" / "python"
    r = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--index-url",
         f"{hub.url}/alice/simple/", "--extra-index-url", impostor.url, "e2e-arith"],
        capture_output=True, text=True, env=base_env(),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert installed_version(python, "e2e-arith") == "99.0.0"
