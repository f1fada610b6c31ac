import asyncio
import os
import sys
import threading
from pathlib import Path

import pytest

ENVS_DIR = Path(__file__).parent / "envs"
# The tests' own kits (stream_kit.py, command_kit.py) import by name, as the hub's and the root
# tests' kits do; test modules import them while being collected, before any fixture runs.
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(autouse=True, scope="session")
def _classic_envs_importable():
    """The example environments in tests/envs are importable by name, here and in subprocesses."""
    sys.path.insert(0, str(ENVS_DIR))
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ENVS_DIR), os.environ.get("PYTHONPATH")) if p
    )
    yield


@pytest.fixture(autouse=True, scope="module")
def _stop_local_ray():
    """The Ray sandbox tier's TIERS entry starts a single-node Ray in this process when none
    runs (the isolation suite); it stops with the module that started it."""
    yield
    ray_tier = sys.modules.get("verifiers.sandbox.ray_tier")
    if ray_tier is not None:
        ray_tier.stop_local_ray()


@pytest.fixture
def server():
    from verifiers.testing import ScriptedServer

    with ScriptedServer() as srv:
        yield srv


@pytest.fixture
def unreachable_hub(monkeypatch):
    """HF_ENDPOINT at a closed local port: a hub that cannot be reached."""
    from verifiers.testing import free_port

    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{free_port()}")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)


@pytest.fixture
async def client_for():
    """`client_for(server)`: a `vf.OpenAIClient` on a scripted server, retrying at once; every
    client made is closed after the test."""
    import verifiers as vf

    clients: list[vf.OpenAIClient] = []

    def open_client(srv) -> vf.OpenAIClient:
        client = vf.OpenAIClient(srv.base_url, api_key="x", retry_base_delay=0.01)
        clients.append(client)
        return client

    yield open_client
    for client in clients:
        await client.aclose()


class InFlight:
    """How many requests a scripted responder is serving at once, and the most it served at
    once (`peak`): the concurrency tests' probe. The server answers from its own thread."""

    def __init__(self) -> None:
        self.now = self.peak = 0
        self._lock = threading.Lock()

    async def hold(self, seconds: float) -> None:
        """Count this request in flight for `seconds`, so that concurrent ones overlap."""
        with self._lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
        await asyncio.sleep(seconds)
        with self._lock:
            self.now -= 1


@pytest.fixture
def in_flight() -> InFlight:
    """A fresh `InFlight` probe for a responder to `await in_flight.hold(seconds)` in."""
    return InFlight()


@pytest.fixture
def run_vf_eval(vf_eval_in_process):
    """`run_vf_eval(tmp_path, env_id, base_url, *args) -> (rows, metadata)`: vf-eval's `main` in
    this process (the root conftest's `vf_eval_in_process`); test_vf_eval*.py run the command."""
    return vf_eval_in_process
