"""The whole loop with real processes: `prime env init` → `prime env push` to a real hub →
`prime env install` (uv and pip) into fresh virtualenvs → `vf.load_environment` → `vf-eval`
against the scripted model → `prime eval --push` → `prime env info --json`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from e2e_kit import Prime, base_env, installed_version, run_py, uv

ENV = "e2e-arith"
REF = f"alice/{ENV}"


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


def test_push_is_idempotent_and_info_lists_both_versions(prime_as, published):
    alice = prime_as("alice")
    again = alice("env", "push", published).ok()
    assert "already published" in again.out
    info = json.loads(prime_as(None)("env", "info", REF, "--json").ok().out)
    assert info["environment"]["latest_version"] == "0.1.1"
    assert [v["version"] for v in info["versions"]] == ["0.1.1", "0.1.0"]
    kinds = sorted(f["kind"] for f in info["versions"][0]["files"])
    assert kinds == ["sdist", "wheel"]
    listed = json.loads(prime_as(None)("env", "search", "e2e-arith", "--json").ok().out)
    assert [f"{e['owner']}/{e['name']}" for e in listed["items"]] == [REF]


def test_uv_install_load_evaluate_push_and_read_back(
    prime_as, published, make_venv, scripted_model, tmp_path
):
    alice, anon = prime_as("alice"), prime_as(None)
    python = make_venv("uv-venv")
    r = anon("env", "install", REF, "--python", python, "--with", "uv").ok()
    assert f"installed {REF} 0.1.1" in r.out
    assert installed_version(python, ENV) == "0.1.1"
    loaded = run_py(
        python,
        "import verifiers as vf\n"
        f"env = vf.load_environment({ENV!r}, num_examples=3)\n"
        "print(type(env).__name__, len(env.get_dataset()))",
    )
    assert loaded.stdout.strip() == "SingleTurnEnv 3", loaded.stderr

    run = alice(
        "eval", f"{REF}@0.1.1", "--push", "--python", python,
        "-m", "scripted", "-b", scripted_model, "-n", "4", "-r", "2", "--no-progress",
        cwd=tmp_path,
    ).ok()  # fmt: skip
    assert f"for {REF} 0.1.1" in run.out
    meta = json.loads(next(tmp_path.glob("outputs/evals/*/*/metadata.json")).read_text())
    assert meta["status"] == "complete" and meta["num_rollouts"] == 8

    info = json.loads(anon("env", "info", REF, "--json").ok().out)
    (record,) = [
        e for e in info["evals"] if e["run_id"] == next(tmp_path.glob("outputs/evals/*/*")).name
    ]
    assert record["version"] == "0.1.1" and record["model"] == "scripted"
    assert record["num_rollouts"] == 8 and record["num_examples"] == 4
    assert record["reward_mean"] == pytest.approx(meta["avg_reward"]) == 1.0
    assert record["pass_at_k"]["1"] == 1.0 and record["submitted_by"] == "alice"
    # the human view shows it too
    assert "scripted" in anon("env", "info", REF).ok().out


def test_pip_install_into_fresh_venv(prime_as, published, make_venv):
    python = make_venv("pip-venv", pip=True)
    r = prime_as(None)("env", "install", f"{REF}@0.1.0", "--python", python, "--with", "pip").ok()
    assert "with pip" in r.out
    assert installed_version(python, ENV) == "0.1.0"
    loaded = run_py(
        python, "import verifiers as vf; print(vf.load_environment('e2e_arith').env_id)"
    )
    assert loaded.stdout.strip() == "e2e_arith", loaded.stderr


def test_vf_eval_installs_hub_environment_on_first_use(
    prime_as, published, make_venv, scripted_model, tmp_path
):
    """`prime eval owner/name@version` in a venv without the package: vf-eval's
    load_environment installs it from the hub (through `prime env install`), then it runs."""
    python = make_venv("first-use")
    assert installed_version(python, ENV) is None
    alice = prime_as("alice")
    alice(
        "eval", f"{REF}@0.1.0", "--push", "--python", python,
        "-m", "first-use-model", "-b", scripted_model, "-n", "2", "-r", "1", "--no-progress",
        cwd=tmp_path,
    ).ok()  # fmt: skip
    assert installed_version(python, ENV) == "0.1.0"
    info = json.loads(alice("env", "info", f"{REF}@0.1.0", "--json").ok().out)
    assert [e["model"] for e in info["evals"]] == ["first-use-model"]
    # and turned off, nothing is installed
    off = run_py(
        python,
        "import verifiers as vf\ntry:\n    vf.load_environment('alice/other-env')\n"
        "except vf.EnvironmentLoadError as e:\n    print('refused', e)",
        VF_HUB_INSTALL="0",
    )
    assert off.stdout.startswith("refused"), off.stderr


def test_pull_extracts_the_source(prime_as, published, tmp_path):
    dest = tmp_path / "pulled"
    prime_as(None)("env", "pull", f"{REF}@0.1.0", "--target", dest).ok()
    assert (dest / "pyproject.toml").is_file()
    assert 'version = "0.1.0"' in (dest / "pyproject.toml").read_text()
    assert (dest / "e2e_arith" / "__init__.py").is_file()


def test_yank_hides_latest_until_undone(prime_as, published):
    alice, anon = prime_as("alice"), prime_as(None)
    alice("env", "yank", f"{REF}@0.1.1", "--reason", "broken").ok()
    try:
        info = json.loads(anon("env", "info", REF, "--json").ok().out)
        assert info["environment"]["latest_version"] == "0.1.0"
    finally:
        alice("env", "yank", f"{REF}@0.1.1", "--undo").ok()
    info = json.loads(anon("env", "info", REF, "--json").ok().out)
    assert info["environment"]["latest_version"] == "0.1.1"


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
    assert "verifiers 0.5.0 from the hub" in r.err
    assert installed_version(python, "verifiers") == "0.5.0"
    ours = run_py(python, "import verifiers.testing, e2e_arith; print('ok')")
    assert ours.stdout.strip() == "ok", ours.stderr
