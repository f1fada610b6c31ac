import os
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


@pytest.fixture
def run_vf_eval():
    """`run_vf_eval(tmp_path, env_id, base_url, *args) -> (rows, metadata)`."""
    from verifiers.testing import run_vf_eval

    return run_vf_eval
