"""Bad input from the issue: each gives one clear line on stderr, a non-zero exit, no traceback."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from e2e_kit import REF, Result, base_env, free_port


def one_clear_line(r: Result, *needles: str) -> None:
    lines = r.err.strip().splitlines()
    assert r.rc != 0, r
    assert "Traceback" not in r.err + r.out, r.err
    assert len(lines) == 1 and lines[0].startswith("error: "), r.err
    for n in needles:
        assert n in lines[0], lines[0]


def test_unknown_environment(prime_as):
    one_clear_line(prime_as(None)("env", "info", "nobody/nothing"), "nobody/nothing not found")


def test_missing_version(prime_as, published, shared_venv):
    r = prime_as(None)("env", "install", f"{REF}@9.9.9", "--python", shared_venv)
    one_clear_line(r, "version 9.9.9", "not found")


def test_no_route_to_the_hub(prime_as):
    r = prime_as(None)("--hub", f"http://127.0.0.1:{free_port()}", "env", "list")
    one_clear_line(r, "cannot reach the hub")


def test_wrong_token(prime_as):
    r = prime_as(None)("whoami", PRIME_TOKEN="phub_not-a-real-token")
    one_clear_line(r, "rejected the API token")


def test_revoked_token_after_logout_revoke(prime_as, hub):
    token = hub.admin("create-token", "alice")
    anon = prime_as(None)
    anon("login", "--token", token).ok()
    anon("logout", "--revoke").ok()
    one_clear_line(anon("whoami", PRIME_TOKEN=token), "rejected the API token")


def test_package_without_load_environment(prime_as, tmp_path):
    pkg = tmp_path / "no-loader"
    (pkg / "no_loader").mkdir(parents=True)
    (pkg / "no_loader" / "__init__.py").write_text("def make_env():\n    return None\n")
    (pkg / "pyproject.toml").write_text(
        '[project]\nname = "no-loader"\nversion = "0.1.0"\n\n'
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
    )
    r = prime_as("alice")("env", "push", pkg, "--bump", "patch")
    one_clear_line(r, "has no load_environment()")
    assert 'version = "0.1.0"' in (pkg / "pyproject.toml").read_text()  # the bump was undone


def test_name_taken_by_someone_else(prime_as, hub, published):
    bob = prime_as("bob")
    # bob tries to publish into alice's namespace (alice/e2e-arith exists)
    one_clear_line(bob("env", "push", published, "--owner", "alice"), "not allowed")
    # an organisation bob only reads is not his to publish under either
    hub.admin("create-org", "e2e-team", "--owner", "alice")
    hub.admin("set-member", "e2e-team", "bob", "--role", "reader")
    assert "e2e-team (reader)" in bob("whoami").ok().out
    one_clear_line(bob("env", "push", published, "--owner", "e2e-team"), "not allowed")


@pytest.mark.parametrize(
    "args, needle",
    [
        (("env", "install", "not-a-reference"), "expected owner/name"),
        (("env", "info", "alice/x@"), "nothing after '@'"),
        (("env", "push", "--bump", "major"), "--bump must be patch, minor or rc"),
        (("env", "install"), "Missing argument"),
    ],
)
def test_malformed_command_lines(prime_as, args, needle):
    one_clear_line(prime_as(None)(*args), needle)


def test_push_needs_a_token(prime_as, published):
    one_clear_line(prime_as(None)("env", "push", published), "needs an API token")


def test_dirty_package_is_refused(prime_as, published, tmp_path):
    pkg = tmp_path / "dirty"
    subprocess.run(["cp", "-r", str(published), str(pkg)], check=True)
    env = base_env() | {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    for cmd in (["init", "-q"], ["add", "."], ["commit", "-qm", "x"]):
        subprocess.run(["git", *cmd], cwd=pkg, check=True, env=env)
    (pkg / "README.md").write_text("changed\n")
    one_clear_line(prime_as("alice")("env", "push", pkg), "uncommitted changes", "README.md")
    assert Path(pkg / "README.md").read_text() == "changed\n"
