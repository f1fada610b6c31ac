import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ENVS_DIR = Path(__file__).parent / "envs"


@pytest.fixture(autouse=True, scope="session")
def _classic_envs_importable():
    """The example environments in tests/envs are importable by name, here and in subprocesses."""
    sys.path.insert(0, str(ENVS_DIR))
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ENVS_DIR), os.environ.get("PYTHONPATH")) if p
    )
    yield


@pytest.fixture
def server():
    from verifiers.testing import ScriptedServer

    with ScriptedServer() as srv:
        yield srv


def _run_vf_eval(tmp_path, env_id, base_url, *args):
    """Run vf-eval in a subprocess; return (results rows, metadata) of its single run."""
    cmd = [
        sys.executable,
        "-m",
        "verifiers.cli.eval",
        env_id,
        "-m",
        "m",
        "-b",
        base_url,
        "--no-progress",
        *map(str, args),
    ]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    (run,) = (tmp_path / "outputs" / "evals" / f"{env_id}--m").iterdir()
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    return rows, json.loads((run / "metadata.json").read_text())


@pytest.fixture
def run_vf_eval():
    """`run_vf_eval(tmp_path, env_id, base_url, *args) -> (rows, metadata)`."""
    return _run_vf_eval
