"""Rows naming a container image: accepted at load (nothing pulled then), run end to end from
an image served by a local registry speaking the real protocol (R2E-Gym and SWE-bench forms,
the image's own runner and hidden tests), and an image that cannot be pulled ending the
rollout with an infra error that names the image and the registry."""

from __future__ import annotations

import asyncio
import json
import math
import os
import shutil
import socket
import sys
import tempfile
from pathlib import Path

import pytest
from mini_swe_agent_plus import SENTINEL, images, load_environment, task_from_row
from mini_swe_testkit import scenario_agent

from verifiers import ConfigError
from verifiers.sandbox import (
    ImageProvider,
    ImageStore,
    Layer,
    LocalRegistry,
    ProcessProvider,
    host_programs,
)
from verifiers.testing import Reply, evaluate_against_script
from verifiers.testing.responders import message_text

pytestmark = pytest.mark.skipif(
    ImageProvider.unavailable_reason() is not None,
    reason=str(ImageProvider.unavailable_reason()),
)
PROGRAMS = ["bash", "cat", "ls", "ln", "mkdir", "rm", "find", "chmod", "env", "sleep", "date"]
PYVER = f"python{sys.version_info.major}.{sys.version_info.minor}"
CALC = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"
HIDDEN = (
    "from calc import add, sub\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_sub():\n    assert sub(5, 3) == 2\n"
)
FIX = {"path": "calc.py", "old_str": "def add(a, b):\n    return a - b", "new_str": "def add(a, b):\n    return a + b"}  # fmt: skip


def pytest_layer() -> Layer:
    """/testbed/.venv: a venv on the image's python holding pytest (copied from this venv)."""
    site = Path(next(p for p in sys.path if p.endswith("site-packages")))
    layer = Layer().dir("testbed/.venv").dir("testbed/.venv/bin")
    layer.file(
        "testbed/.venv/pyvenv.cfg", "home = /usr/bin\ninclude-system-site-packages = false\n"
    )
    layer.symlink("testbed/.venv/bin/python", "/usr/bin/python3")
    dest = (
        f"testbed/.venv/lib/{os.path.basename(os.path.realpath('/usr/bin/python3'))}/site-packages"
    )
    layer.dir("testbed/.venv/lib").dir(dest)
    wanted = {"pytest", "_pytest", "pluggy", "iniconfig", "packaging", "pygments", "py.py"}
    for src in sorted(site.iterdir()):  # the packages and their metadata (*.dist-info)
        if src.name.split("-")[0].lower() not in wanted:
            continue
        name = src.name
        if src.is_file():
            layer.file(f"{dest}/{name}", src.read_bytes())
            continue
        for p in sorted(src.rglob("*")):
            rel = p.relative_to(site).as_posix()
            if "__pycache__" in rel:
                continue
            if p.is_dir():
                layer.dir(f"{dest}/{rel}")
            else:
                layer.file(f"{dest}/{rel}", p.read_bytes())
    return layer


def r2e_layer() -> Layer:
    return (
        Layer()
        .dir("root")
        .file("testbed/calc.py", CALC)
        .file("testbed/run_tests.sh", ".venv/bin/python -W ignore -m pytest -rA r2e_tests\n", 0o755)
        .dir("r2e_tests")
        .file("r2e_tests/test_calc.py", HIDDEN)
    )


def swebench_layer() -> Layer:
    # as SWE-bench's eval scripts do: the test file arrives with the runner, then pytest runs
    script = (
        "#!/bin/bash\ncd /testbed\nmkdir -p tests\ncat > tests/test_calc.py <<'EOF'\n"
        f"{HIDDEN}EOF\n.venv/bin/python -m pytest -rA tests/test_calc.py\n"
    )
    return Layer().dir("root").file("testbed/calc.py", CALC).file("run_tests.sh", script, 0o644)


@pytest.fixture(scope="module")
def registry():
    base = host_programs(PROGRAMS, python=True)
    with LocalRegistry() as reg:
        venv = pytest_layer()
        reg.add_image("r2e/calc", "v1", [base, venv, r2e_layer()])
        reg.add_image("swe/calc", "v1", [base, venv, swebench_layer()])
        yield reg


@pytest.fixture
def provider():
    d = Path(tempfile.mkdtemp(prefix="vf-msa-img-"))
    os.chmod(d, 0o755)
    yield ImageProvider(store=ImageStore(d / "images"))
    shutil.rmtree(d, ignore_errors=True)


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def call(name, **arguments):
    return Reply(tool_calls=[{"name": name, "arguments": arguments}])


SUBMIT = call("execute_bash", command=f"echo {SENTINEL}")
PROBE = call("execute_bash", command="ls /r2e_tests /run_tests.sh run_tests.sh; pwd; echo $HOME")
# a conftest.py that reports every failing test as passed (no fix)
CHEAT = (
    "cat > conftest.py <<'EOF'\nimport pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
    "def pytest_runtest_makereport(item, call):\n    outcome = yield\n"
    "    report = outcome.get_result()\n    if report.failed:\n"
    "        report.outcome = 'passed'\nEOF"
)
SCRIPTS = {
    "gold": [PROBE, call("edit_via_str_replace", **FIX), SUBMIT],
    "noedit": [PROBE, SUBMIT],
    "cheat": [call("execute_bash", command=CHEAT), SUBMIT],
}


agent = scenario_agent("SCENARIO", SCRIPTS)


def row(image: str, scenario: str, kind: str) -> dict:
    out = {
        "instance_id": f"{kind}-{scenario}",
        "problem_statement": f"SCENARIO<{scenario}>\nadd() subtracts instead of adding.",
        "docker_image": image,
        "repo_name": "calc",
    }
    if kind == "r2e":
        out["expected_output_json"] = json.dumps({"test_add": "PASSED", "test_sub": "PASSED"})
    else:
        out["FAIL_TO_PASS"] = json.dumps(["tests/test_calc.py::test_add"])
        out["PASS_TO_PASS"] = json.dumps(["tests/test_calc.py::test_sub"])
    return out


async def evaluate(env):
    out = await evaluate_against_script(env, agent, state_columns=["grading"])
    return {r["info"]["instance_id"]: r for r in out["outputs"]}


def test_image_rows_are_accepted_at_load_without_pulling():
    task = task_from_row(row("127.0.0.1:1/never/pulled:v1", "gold", "r2e"))
    assert task.docker_image == "127.0.0.1:1/never/pulled:v1" and task.image_kind == "r2e"
    env = load_environment(source=[row("127.0.0.1:1/never/pulled:v1", "gold", "swe")])
    assert isinstance(env.provider, ImageProvider)
    assert "/testbed" in message_text(env.dataset[0]["prompt"][-1])
    # upstream's sandbox size and timeouts hold for image rows too
    spec = images.image_spec(env.spec, env.tasks["swe-gold"])
    assert (spec.image, spec.workdir, spec.runtime.packages) == (
        "127.0.0.1:1/never/pulled:v1",
        "/testbed",
        (),
    )
    assert (spec.cpu, spec.memory, spec.disk, spec.lifetime) == (8.0, 8 * 2**30, 10 * 2**30, 7200)
    assert env.test_timeout == 3600 and spec.env["HOME"] == "/root"
    with pytest.raises(ConfigError, match="docker_image"):
        task_from_row(row("Not A/Reference", "gold", "r2e"))
    # upstream's other column name, and R2E-Gym-Subset rows without an instance_id
    bare = row("ns/pandas_final:abc", "gold", "r2e")
    bare["image_name"] = bare.pop("docker_image")
    del bare["instance_id"]
    task = task_from_row(bare)
    assert task.instance_id == task.docker_image == "ns/pandas_final:abc"
    # both forms given: SWE-bench's (graded from /run_tests.sh), as upstream for those sets
    both = {**row("x/y:1", "gold", "swe"), "expected_output_json": '{"t": "PASSED"}'}
    assert task_from_row(both).image_kind == "swebench"
    with pytest.raises(ConfigError, match="cannot run"):
        load_environment(source=[row("x/y:1", "gold", "r2e")], provider=ProcessProvider())


def test_image_rows_run_end_to_end(registry, provider):
    r2e, swe = f"{registry.host}/r2e/calc:v1", f"{registry.host}/swe/calc:v1"
    rows = [row(img, s, kind) for img, kind in ((r2e, "r2e"), (swe, "swe")) for s in SCRIPTS]
    env = load_environment(source=rows, max_turns=6, command_timeout=30, provider=provider)
    recs = asyncio.run(evaluate(env))
    for kind in ("r2e", "swe"):
        gold, noedit = recs[f"{kind}-gold"], recs[f"{kind}-noedit"]
        assert gold["error"] is None, gold["error"]
        assert gold["reward"] == 1.0, (gold["grading"]["reason"], gold["grading"]["log_tail"])
        assert noedit["reward"] == 0.0 and noedit["error"] is None, noedit["grading"]
        assert (
            "differ" in noedit["grading"]["reason"] or "not passing" in noedit["grading"]["reason"]
        )
        # the hidden tests and the runner were not in the sandbox while the agent worked
        probe = next(m for m in gold["completion"] if m["role"] == "tool")
        text = message_text(probe)
        assert "No such file" in text and "/testbed\n/root" in text, text
        assert gold["grading"]["image"].endswith("/calc:v1")
        assert gold["grading"]["image_digest"].startswith("sha256:")
        assert gold["grading"]["copied"] == ["calc.py"]  # the fix, nothing else
    assert recs["r2e-gold"]["grading"]["statuses"] == {"test_add": "PASSED", "test_sub": "PASSED"}
    for kind in ("r2e", "swe"):  # the agent's conftest.py is removed before the run
        cheat = recs[f"{kind}-cheat"]
        assert cheat["reward"] == 0.0, cheat["grading"]["reason"]
        assert cheat["grading"]["protected_changed"] == ["conftest.py"]
        assert cheat["grading"]["fresh_sandbox"] is True
        assert cheat["metrics"]["protected_files_changed"] == 1.0


def test_the_cheat_works_when_graded_in_the_agents_sandbox(registry, provider):
    """Control: the same conftest.py turns the failing test into a pass when the tests run in
    the agent's own sandbox, as upstream's do (so the test above can fail)."""
    image = f"{registry.host}/r2e/calc:v1"
    env = load_environment(source=[row(image, "cheat", "r2e")], max_turns=4, provider=provider)
    env.fresh_grading_sandbox = False
    rec = asyncio.run(evaluate(env))["r2e-cheat"]
    assert rec["reward"] == 1.0, rec["grading"]["reason"]


SAMPLE = Path(__file__).resolve().parent.parent / "mini_swe_agent_plus" / "data" / "sample.jsonl"


def test_rows_given_as_files_run_on_the_image_provider_too(registry, provider):
    """A dataset mixing both kinds: the file row runs on the image provider's plain layout
    (the pytest runtime mounted as on the bwrap tier) next to an image row."""
    sample = json.loads(SAMPLE.read_text().splitlines()[0])
    SCRIPTS["file-gold"] = [
        *(call("edit_via_str_replace", **e) for e in sample["gold_edits"]),
        SUBMIT,
    ]
    file_row = {
        **sample,
        "problem_statement": "SCENARIO<file-gold>\n" + sample["problem_statement"],
    }
    rows = [file_row, row(f"{registry.host}/r2e/calc:v1", "gold", "r2e")]
    env = load_environment(source=rows, max_turns=6, command_timeout=30, provider=provider)
    recs = asyncio.run(evaluate(env))
    assert recs[sample["instance_id"]]["reward"] == 1.0, recs[sample["instance_id"]]["grading"]
    assert recs["r2e-gold"]["reward"] == 1.0


def test_unpullable_image_is_an_infra_error_naming_image_and_registry(provider):
    host = f"127.0.0.1:{closed_port()}"
    env = load_environment(source=[row(f"{host}/r2e/gone:v1", "gold", "r2e")], provider=provider)
    env.max_retries = 0
    rec = asyncio.run(evaluate(env))["r2e-gold"]
    assert rec["error"] is not None and rec["error"]["infra"] is True, rec["error"]
    message = rec["error"]["message"]
    assert f"{host}/r2e/gone:v1" in message and f"http://{host}" in message, message
    assert math.isnan(rec["reward"])  # masked, never a fake 0
