"""A new author's first hour (issue 27 item 1), in a fresh shell whose PATH holds only the
system (/usr/bin:/bin), python3 and uv (with uvx, which ships with it): no `prime`, no
workspace virtualenv. Every command is one a page or the CLI prints, run verbatim:

* docs/quickstart.md's author block: `uvx ... prime login`, `uvx ... prime env init my-env`
  (`prime` from the hub, not installed), then the steps `prime env init` printed, run as
  printed (cd, uv venv + activate, install with the dev group, pytest, `prime env push`: the
  `prime` the dev group put into the new venv, from the hub), then `prime eval --push`. The
  quickstart's lines after `init` are the printed steps, so both are checked at once;
* the quickstart's install-by-name block (a fresh venv, `uvx ... prime env install`, vf-eval)
  and the scaffolded README's vf-eval line against the scripted model;
* (these two blocks are marked no-run for tests/test_docs.py, with this file as the reason:
  each runs once, here, in the stricter shell);
* then upstream's own classifier (the public `prime` CLI's `classify_runtime_from_metadata`)
  reads the published package's `verifiers` pin: it must say classic (v0), which our SDK is.

The hub is this module's own, where the operator has published our SDK and CLI (the
quickstart's publishing block; test_docs runs that block itself): the session's shared hub must
start without an SDK (test_cli_hub_e2e checks that).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from docs_runner import blocks, substitute
from e2e_kit import Hub, base_env, running_hub, uv
from packaging.requirements import Requirement
from packaging.utils import parse_wheel_filename
from packaging.version import Version

from prime_cli.scaffold import SDK_REQUIREMENT

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "docs" / "quickstart.md"
NAME, AUTHOR = "my-env", "alice"  # the quickstart's
_spec = importlib.util.spec_from_file_location(
    "public_prime_cli", ROOT / "bench" / "public_prime_cli.py"
)
assert _spec and _spec.loader
public_prime_cli = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(public_prime_cli)


@pytest.fixture(scope="module")
def sdk_hub(
    tmp_path_factory: pytest.TempPathFactory, verifiers_wheel: Path, prime_cli_wheel: Path
) -> Iterator[Hub]:
    """A fresh hub where the operator has published our SDK and CLI (`uv publish` to
    /legacy/), and with the default local-only names: `prime` never passes through to PyPI."""
    with running_hub(tmp_path_factory.mktemp("first-hour-hub")) as hub:
        publish = subprocess.run(
            [uv(), "publish", "--publish-url", f"{hub.url}/legacy/", "--token", hub.user("sdk"),
             str(verifiers_wheel), str(prime_cli_wheel)],
            capture_output=True, text=True, env=base_env(),
        )  # fmt: skip
        assert publish.returncode == 0, publish.stderr
        yield hub


@pytest.fixture(scope="module")
def machine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The one folder of a new author's PATH besides /usr/bin:/bin: python3, uv and uvx (as
    uv's installer leaves them in ~/.local/bin). Not the workspace's virtualenv, whose prime,
    pytest and verifiers would hide a broken step."""
    tools = tmp_path_factory.mktemp("tools")
    python = Path(getattr(sys, "_base_executable", sys.executable)).resolve()
    uv_bin = Path(uv()).resolve()
    for name, target in [("python3", python), ("uv", uv_bin), ("uvx", uv_bin.with_name("uvx"))]:
        assert target.exists(), target
        (tools / name).symlink_to(target)
    assert not (tools / "prime").exists()
    return tools


def shell(env: dict[str, str], commands: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The commands, one after another in one bash, stopping at the first that fails."""
    return subprocess.run(
        ["bash", "-c", "set -eo pipefail\n" + "\n".join(commands)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def commands(code: str) -> list[str]:
    """A shell block's commands, without their trailing comments."""
    return [re.sub(r"\s+# .*$", "", x).strip() for x in code.splitlines() if x.strip()]


def printed_steps(out: str) -> list[str]:
    lines = out.splitlines()
    start = lines.index("next steps:") + 1
    steps = []
    for line in lines[start:]:
        if not line.startswith("  "):
            break
        steps.append(line.strip())
    return steps


def upstream_runtime(*pins: list[str]) -> list[str | None]:
    """What the public `prime env push` sends as a package's runtime (v0/v1) for each list of
    requirements: its own `classify_runtime_from_metadata`, run in its own venv (the one
    bench/public_prime_cli.py builds for packages/hub-server/tests/test_public_prime_cli.py)."""
    python = public_prime_cli.ensure().parent / "python"
    code = (
        "import json, sys\n"
        "from prime_cli.utils.environment_runtime import classify_runtime_from_metadata as c\n"
        "print(json.dumps([c(reqs) for reqs in json.loads(sys.argv[1])]))"
    )
    r = subprocess.run(
        [str(python), "-c", code, json.dumps(pins)],
        capture_output=True,
        text=True,
        env=base_env(),
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_first_hour_from_a_fresh_shell(sdk_hub, machine, scripted_model, verifiers_wheel, tmp_path):
    # the blocks this test runs are marked no-run for tests/test_docs.py, naming this file
    shell_blocks = [
        b.code
        for b in blocks(QUICKSTART)
        if b.kind == "shell" and (b.no_run is None or "test_first_hour.py" in b.no_run)
    ]
    (author,) = [commands(b) for b in shell_blocks if "prime env init" in b]
    (by_name,) = [commands(b) for b in shell_blocks if "prime env install" in b]
    values = {"-b URL": f"-b {scripted_model}"}  # as tests/test_docs.py substitutes
    author, by_name = ([substitute(c, values) for c in cs] for cs in (author, by_name))
    env = {k: v for k, v in base_env().items() if k != "PRIME_CLI"} | {
        "PATH": f"{machine}{os.pathsep}/usr/bin{os.pathsep}/bin",
        "PRIME_HUB_URL": sdk_hub.url,  # the quickstart's `export PRIME_HUB_URL=...`
        "TOKEN": sdk_hub.user(AUTHOR),  # ... and `TOKEN=$(prime-hub admin create-token ...)`
        "PRIME_CONFIG_DIR": str(tmp_path / "prime-config"),
        "PRIME_CACHE_DIR": str(tmp_path / "prime-cache"),
    }
    found = subprocess.run(["bash", "-c", "compgen -c prime"], env=env, capture_output=True)
    assert b"prime" not in found.stdout.split()  # no `prime` before the steps bring one
    work = tmp_path / "work"
    work.mkdir()

    # the quickstart up to `prime env init`: prime run by uvx from the hub
    at_init = next(i for i, c in enumerate(author) if " prime env init " in c)
    init = shell(env, author[: at_init + 1], work)
    assert init.returncode == 0, f"{init.stdout}\n{init.stderr}"
    index = f"{sdk_hub.url}/simple/"
    assert f"verifiers from the hub's index {index}" in init.stdout
    assert f"pip install --index-url {index} -e . --group dev" in init.stderr
    steps = printed_steps(init.stdout)
    assert steps[0] == f"cd {NAME}" and steps[-1] == "prime env push", steps
    assert "prime login" not in steps  # the quickstart logged in first
    # the quickstart's next lines are the printed steps, word for word
    assert author[at_init + 1 : at_init + 1 + len(steps)] == steps
    rest = author[at_init + 1 + len(steps) :]
    assert rest and all(c.startswith("prime ") for c in rest), rest

    # the printed steps verbatim, the quickstart's last steps, its install-by-name block and
    # the scaffolded README's vf-eval line, in one shell
    project = work / NAME
    readme = (project / "README.md").read_text()
    (evaluate,) = [x for x in readme.splitlines() if x.startswith(f"vf-eval {NAME} ")]
    evaluate = evaluate.replace("<model>", "scripted").replace(
        "<OpenAI-compatible base URL>", scripted_model
    )
    run = shell(env, [*steps, *rest, *by_name, evaluate], work)
    assert run.returncode == 0, f"{run.stdout}\n{run.stderr}"
    assert re.search(r"\b2 passed\b", run.stdout), run.stdout  # the package's own tests ran
    assert f"published {AUTHOR}/{NAME} 0.1.0" in run.stdout, run.stdout
    (install,) = [
        x.split(":", 1)[1].strip() for x in run.stdout.splitlines() if x.startswith("install:")
    ]
    assert install == f"prime env install {AUTHOR}/{NAME}@0.1.0"
    sdk_version = str(parse_wheel_filename(verifiers_wheel.name)[1])
    site = next((project / ".venv").glob("lib/python*/site-packages"))
    # the SDK and the CLI in the author's venv are the hub's (the dev group put prime there)
    assert [p.name for p in site.glob("verifiers-*.dist-info")] == [
        f"verifiers-{sdk_version}.dist-info"
    ]
    assert [p.name for p in site.glob("prime-*.dist-info")] == ["prime-0.1.0.dist-info"]
    assert (project / ".venv" / "bin" / "prime").exists()

    # the evaluations in the fresh venv: the quickstart's (MODEL) and the README's (scripted)
    elsewhere = work / "elsewhere"
    assert elsewhere.is_dir()
    (readme_meta,) = work.glob(f"outputs/evals/{NAME}--scripted/*/metadata.json")
    meta = json.loads(readme_meta.read_text())
    assert meta["status"] == "complete" and meta["avg_reward"] == 1.0
    n, r = (int(v) for v in re.findall(r"-[nr] (\d+)", evaluate))
    assert meta["num_rollouts"] == n * r
    (quick_meta,) = work.glob(f"outputs/evals/{NAME}--MODEL/*/metadata.json")
    assert json.loads(quick_meta.read_text())["avg_reward"] == 1.0

    # what upstream's tools read off the published package: classic (v0), the truth
    site = next(elsewhere.glob("lib/python*/site-packages"))
    dist_info = site / f"{NAME.replace('-', '_')}-0.1.0.dist-info"
    requires = [
        line.split(":", 1)[1].strip()
        for line in (dist_info / "METADATA").read_text().splitlines()
        if line.startswith("Requires-Dist:")
    ]
    assert Requirement(SDK_REQUIREMENT) in [Requirement(x) for x in requires]
    assert not any(Requirement(x).name == "prime" for x in requires)  # a dev-only dependency
    # the published pin; the one a classic author writes by hand (`>=` our current version);
    # control: the pin the scaffold used to write (0.5), read as the v1 API, which it is not
    by_hand, old = [f"verifiers>={sdk_version}"], ["verifiers>=0.5"]
    assert upstream_runtime(requires, by_hand, old) == ["VERIFIERS_V0"] * 2 + ["VERIFIERS_V1"]
    assert Version(sdk_version) in Requirement(SDK_REQUIREMENT).specifier
