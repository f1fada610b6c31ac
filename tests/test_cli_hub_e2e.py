"""The whole loop with real processes: `prime env init` → `prime env push` to a real hub →
`prime env install` (uv and pip) into fresh virtualenvs → `vf.load_environment` → `vf-eval`
against the scripted model → `prime eval --push` → `prime env info --json`."""

from __future__ import annotations

import json
import subprocess

import pytest
from e2e_kit import ENV, REF, base_env, installed_version, run_py, uv
from packaging.utils import parse_wheel_filename


def test_push_is_idempotent_and_info_lists_both_versions(prime_as, published):
    alice = prime_as("alice")
    again = alice("env", "push", published).ok()
    assert "already published" in again.out
    info = json.loads(prime_as(None)("env", "info", REF, "--json").ok().out)
    assert info["environment"]["latest_version"] == "0.1.1"
    versions = json.loads(prime_as(None)("env", "versions", REF, "--json").ok().out)["versions"]
    assert (
        [v["version"] for v in versions]
        == ["0.1.1", "0.1.0"]
        == [v["version"] for v in info["versions"]]
    )
    kinds = sorted(f["kind"] for f in versions[0]["files"])
    assert kinds == ["sdist", "wheel"]
    listed = json.loads(prime_as(None)("env", "search", "e2e-arith", "--json").ok().out)
    assert [f"{e['owner']}/{e['name']}" for e in listed["items"]] == [REF]


def test_uv_install_into_fresh_venv_and_load(prime_as, published, make_venv):
    python = make_venv("uv-venv")
    r = prime_as(None)("env", "install", REF, "--python", python, "--with", "uv").ok()
    assert f"installed {REF} 0.1.1" in r.out and "with uv" in r.out
    loaded = run_py(
        python,
        "import importlib.metadata as m, verifiers as vf\n"
        f"env = vf.load_environment({ENV!r}, num_examples=3)\n"
        f"print(m.version({ENV!r}), type(env).__name__, len(env.get_dataset()))",
    )
    assert loaded.stdout.strip() == "0.1.1 SingleTurnEnv 3", loaded.stderr


def test_pip_install_into_fresh_venv(prime_as, published, make_venv):
    python = make_venv("pip-venv", pip=True)
    r = prime_as(None)("env", "install", f"{REF}@0.1.0", "--python", python, "--with", "pip").ok()
    assert f"installed {REF} 0.1.0" in r.out and "with pip" in r.out
    assert installed_version(python, ENV) == "0.1.0"
    loaded = run_py(
        python,
        "import verifiers as vf\n"
        "env = vf.load_environment('e2e-arith', num_examples=2)\n"
        "print(type(env).__name__, len(env.get_dataset()))",
    )
    assert loaded.stdout.strip() == "SingleTurnEnv 2", loaded.stderr


def test_eval_installs_on_first_use_pushes_and_reads_back(
    prime_as, published, make_venv, scripted_model, tmp_path
):
    """`prime eval owner/name@version --push` in a venv without the package: vf-eval's
    vf.load_environment installs it from the hub (through `prime env install`), evaluates it
    against the scripted model, and the summary lands on the hub, where `prime env info` shows it."""
    python = make_venv("first-use")
    assert installed_version(python, ENV) is None
    alice, anon = prime_as("alice"), prime_as(None)
    run = alice(
        "eval", f"{REF}@0.1.0", "--push", "--python", python,
        "-m", "scripted", "-b", scripted_model, "-n", "4", "-r", "2", "--no-progress",
        cwd=tmp_path,
    ).ok()  # fmt: skip
    assert f"for {REF} 0.1.0" in run.out
    assert installed_version(python, ENV) == "0.1.0"
    (run_dir,) = list(tmp_path.glob("outputs/evals/*/*"))
    meta = json.loads((run_dir / "metadata.json").read_text())
    assert meta["status"] == "complete" and meta["num_rollouts"] == 8

    info = json.loads(anon("env", "info", f"{REF}@0.1.0", "--json").ok().out)
    (record,) = [e for e in info["evals"] if e["run_id"] == run_dir.name]
    assert record["version"] == "0.1.0" and record["model"] == "scripted"
    assert record["num_rollouts"] == 8 and record["num_examples"] == 4
    assert record["reward_mean"] == pytest.approx(meta["avg_reward"]) == 1.0
    assert record["pass_at_k"]["1"] == 1.0 and record["submitted_by"] == "alice"
    assert record["num_errors"] == 0 and record["rollouts_per_example"] == 2
    assert "scripted" in anon("env", "info", REF).ok().out  # the table shows it too
    # an existing run directory can be pushed without re-running it; a plain name is your own
    again = alice("eval", "--push", "--results", run_dir, "--env", f"{ENV}@0.1.0").ok()
    assert f"for {REF} 0.1.0" in again.out


def test_pull_extracts_the_source(prime_as, published, tmp_path):
    dest = tmp_path / "pulled"
    prime_as(None)("env", "pull", f"{REF}@0.1.0", "--target", dest).ok()
    assert (dest / "pyproject.toml").is_file()
    assert 'version = "0.1.0"' in (dest / "pyproject.toml").read_text()
    assert (dest / "e2e_arith" / "__init__.py").is_file()


def test_yank_hides_latest_until_undone(prime_as, published, hub_client):
    alice = prime_as("alice")
    alice("env", "yank", f"{REF}@0.1.1", "--reason", "broken").ok()
    try:
        with hub_client() as c:
            env = c.get(f"/api/v1/environments/{REF}").json()
            assert env["latest_version"] == "0.1.0"
            assert c.get(f"/api/v1/environments/{REF}/versions/0.1.1").json()["yanked"]
    finally:
        alice("env", "yank", f"{REF}@0.1.1", "--undo").ok()
    with hub_client() as c:
        assert c.get(f"/api/v1/environments/{REF}").json()["latest_version"] == "0.1.1"


def test_verifiers_comes_from_the_hub_never_from_pypi(
    prime_as, hub, published, make_venv, verifiers_wheel
):
    """A venv without verifiers: the install stops with one clear line while the hub hosts no
    verifiers; once the hub hosts our SDK, it comes from the hub, hash-checked."""
    python = make_venv("no-sdk", sdk=False)
    anon = prime_as(None)
    r = anon("env", "install", REF, "--python", python)
    assert r.rc == 1 and r.err.startswith("error: the environment needs verifiers"), r.err
    assert "PyPI" in r.err and len(r.err.strip().splitlines()) == 1
    assert installed_version(python, ENV) is None

    publish = subprocess.run(
        [uv(), "publish", "--publish-url", f"{hub.url}/legacy/", "--token", hub.user("sdk"),
         str(verifiers_wheel)],
        capture_output=True, text=True, env=base_env(),
    )  # fmt: skip
    assert publish.returncode == 0, publish.stderr
    r = anon("env", "install", REF, "--python", python).ok()
    sdk = str(parse_wheel_filename(verifiers_wheel.name)[1])
    assert f"verifiers {sdk} from the hub" in r.err
    assert installed_version(python, "verifiers") == sdk
    ours = run_py(python, "import verifiers.testing, e2e_arith; print('ok')")
    assert ours.stdout.strip() == "ok", ours.stderr
