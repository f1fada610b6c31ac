"""A new author's first hour, from empty folders, with only the commands the CLI and the scaffold
print: `prime env init` → the printed steps run verbatim in one shell (uv venv, activate, install,
pytest, push) → the install line that push printed, in another fresh venv → the README's vf-eval
line against the scripted model. Then upstream's own classifier (the public `prime` CLI's
`classify_runtime_from_metadata`) reads the published package's `verifiers` pin: it must say
classic (v0), which is what our SDK is.

The hub is this module's own: the session's shared hub must start without an SDK
(test_cli_hub_e2e checks that), and an author's first hour needs one that has it.
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
from e2e_kit import Hub, Prime, base_env, running_hub, uv
from packaging.requirements import Requirement
from packaging.utils import parse_wheel_filename
from packaging.version import Version

from prime_cli.scaffold import SDK_REQUIREMENT

NAME = "word-count"
ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location(
    "public_prime_cli", ROOT / "bench" / "public_prime_cli.py"
)
assert _spec and _spec.loader
public_prime_cli = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(public_prime_cli)


@pytest.fixture(scope="module")
def sdk_hub(tmp_path_factory: pytest.TempPathFactory, verifiers_wheel: Path) -> Iterator[Hub]:
    """A fresh hub where the operator has published our SDK (`uv publish` to /legacy/)."""
    with running_hub(tmp_path_factory.mktemp("first-hour-hub")) as hub:
        publish = subprocess.run(
            [uv(), "publish", "--publish-url", f"{hub.url}/legacy/", "--token", hub.user("sdk"),
             str(verifiers_wheel)],
            capture_output=True, text=True, env=base_env(),
        )  # fmt: skip
        assert publish.returncode == 0, publish.stderr
        yield hub


@pytest.fixture(scope="module")
def machine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A PATH with only what a new author has installed: python3, uv and prime (not the
    workspace's virtualenv, whose pytest and verifiers would hide a broken install)."""
    tools = tmp_path_factory.mktemp("tools")
    python = Path(getattr(sys, "_base_executable", sys.executable)).resolve()
    prime = Path(sys.prefix) / "bin" / "prime"
    for name, target in [("python3", python), ("uv", Path(uv())), ("prime", prime)]:
        (tools / name).symlink_to(target)
    return tools


def shell(
    prime: Prime, tools: Path, commands: list[str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    """The commands, one after another in one bash, stopping at the first that fails."""
    env = prime.env() | {"PATH": f"{tools}{os.pathsep}/usr/bin{os.pathsep}/bin"}
    return subprocess.run(
        ["bash", "-c", "set -e\n" + "\n".join(commands)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


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


def test_first_hour_from_empty_folders(sdk_hub, machine, scripted_model, verifiers_wheel, tmp_path):
    author = Prime(sdk_hub, tmp_path / "author-home", sdk_hub.user("author"))
    work = tmp_path / "work"
    work.mkdir()

    init = shell(author, machine, [f"prime env init {NAME}"], work)
    assert init.returncode == 0, init.stderr
    index = f"{sdk_hub.url}/simple/"
    assert f"verifiers from the hub's index {index}" in init.stdout
    steps = printed_steps(init.stdout)
    assert steps[0] == f"cd {NAME}" and steps[-1] == "prime env push", steps
    assert any(s.startswith("uv venv") and "activate" in s for s in steps), steps
    assert "pytest" in steps  # logged in (PRIME_TOKEN): no `prime login` step
    assert f"pip install --index-url {index} -e . --group dev" in init.stderr

    # the author: every printed step, verbatim
    run = shell(author, machine, steps, work)
    assert run.returncode == 0, f"{run.stdout}\n{run.stderr}"
    assert re.search(r"\b2 passed\b", run.stdout), run.stdout  # the package's own tests ran
    assert f"published author/{NAME} 0.1.0" in run.stdout, run.stdout
    (install,) = [
        x.split(":", 1)[1].strip() for x in run.stdout.splitlines() if x.startswith("install:")
    ]
    assert install == f"prime env install author/{NAME}@0.1.0"
    project = work / NAME
    sdk_version = str(parse_wheel_filename(verifiers_wheel.name)[1])
    installed = (project / ".venv").glob("lib/python*/site-packages/verifiers-*.dist-info")
    assert [p.name for p in installed] == [f"verifiers-{sdk_version}.dist-info"]  # from the hub

    # a user: a fresh venv elsewhere, the install line push printed, the README's vf-eval line
    readme = (project / "README.md").read_text()
    (evaluate,) = [x for x in readme.splitlines() if x.startswith(f"vf-eval {NAME} ")]
    evaluate = evaluate.replace("<model>", "scripted").replace(
        "<OpenAI-compatible base URL>", scripted_model
    )
    user = Prime(sdk_hub, tmp_path / "user-home")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    fresh = "uv venv && source .venv/bin/activate"
    used = shell(user, machine, [fresh, install, evaluate], elsewhere)
    assert used.returncode == 0, f"{used.stdout}\n{used.stderr}"
    (meta_file,) = elsewhere.glob(f"outputs/evals/{NAME}--scripted/*/metadata.json")
    meta = json.loads(meta_file.read_text())
    assert meta["status"] == "complete" and meta["avg_reward"] == 1.0
    n, r = (int(v) for v in re.findall(r"-[nr] (\d+)", evaluate))
    assert meta["num_rollouts"] == n * r

    # what upstream's tools read off the published package: classic (v0), the truth
    site = next((elsewhere / ".venv").glob("lib/python*/site-packages"))
    dist_info = site / f"{NAME.replace('-', '_')}-0.1.0.dist-info"
    requires = [
        line.split(":", 1)[1].strip()
        for line in (dist_info / "METADATA").read_text().splitlines()
        if line.startswith("Requires-Dist:")
    ]
    assert Requirement(SDK_REQUIREMENT) in [Requirement(x) for x in requires]
    # the published pin; the one a classic author writes by hand (`>=` our current version);
    # control: the pin the scaffold used to write (0.5), read as the v1 API, which it is not
    by_hand, old = [f"verifiers>={sdk_version}"], ["verifiers>=0.5"]
    assert upstream_runtime(requires, by_hand, old) == ["VERIFIERS_V0"] * 2 + ["VERIFIERS_V1"]
    assert Version(sdk_version) in Requirement(SDK_REQUIREMENT).specifier
