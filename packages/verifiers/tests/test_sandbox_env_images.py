"""Classic container-image environments on the image tier (issue 27 item 7).

Public classic SandboxEnv/PythonEnv environments assume a container: `docker_image=
"python:3.11-slim"`, a `start_command` that prepares the machine and idles
(`bash -c '... && tail -f /dev/null'`), writes to /app and /root (gptworld uploads
/app/main.py; tensor_puzzles writes /root/utils), `pip install` at run time (gpu_puzzles,
arc_agi_tool, polars_env). Here a local registry serves a small Python image built from the
host's programs as Docker Hub's `library/python:3.11-slim`, named by `VF_REGISTRY_MIRROR`,
and a pip index on loopback serves a wheel built in the test."""

from __future__ import annotations

import base64
import hashlib
import http.server
import io
import logging
import os
import shutil
import tempfile
import threading
import zipfile
from pathlib import Path

import pytest
from datasets import Dataset

import verifiers as vf
from verifiers.envs.python_env import PythonEnv
from verifiers.envs.sandbox_client import APIError, CreateSandboxRequest, SandboxNotRunningError
from verifiers.envs.sandbox_env import SandboxEnv
from verifiers.envs.sandbox_images import StartCommandError, image_source, start_phase
from verifiers.sandbox import ImageProvider, tier_of
from verifiers.sandbox import image as image_module
from verifiers.sandbox.localregistry import LocalRegistry, python_image_layers
from verifiers.testing import Reply, ScriptedServer
from verifiers.testing.responders import last_message

REASON = ImageProvider.unavailable_reason()
needs_images = pytest.mark.skipif(REASON is not None, reason=f"image tier: {REASON}")
MiB_IN_GB = 1 / 1024
HOST_PIP = Path("/usr/lib/python3/dist-packages/pip").is_dir()
SMALL = dict(memory_gb=0.5, disk_size_gb=64 * MiB_IN_GB, pool_size=0)


# -- where images come from, what of a start command runs -------------------------------------
@pytest.mark.parametrize(
    "command, expected",
    [
        ("tail -f /dev/null", None),
        ("sleep infinity", None),
        ("", None),
        ("bash -c 'tail -f /dev/null'", None),
        # ktor / torch_ao_codebase_search: prepare, then idle
        (
            "bash -c 'apt-get update && git clone R /w && chmod -R 755 /w && tail -f /dev/null'",
            ["bash", "-c", "apt-get update && git clone R /w && chmod -R 755 /w"],
        ),
        # upstream PythonEnv's multi-line `bash -lc` start command keeps its login flag
        ("bash -lc '\n  pip install x\n  tail -f /dev/null\n'", ["bash", "-lc", "pip install x"]),
        ("mkdir -p /app; exec sleep infinity", "mkdir -p /app"),
        ("python3 -m http.server 8000", "python3 -m http.server 8000"),  # runs; times out
    ],
)
def test_start_phase_drops_only_the_idle_tail(command, expected):
    assert start_phase(command) == expected


def test_image_sources(monkeypatch):
    """A Docker Hub name needs the mirror setting; an image naming its registry is pulled
    from it; anything else is no image to pull."""
    monkeypatch.delenv("VF_REGISTRY_MIRROR", raising=False)
    assert image_source("python:3.11-slim") is None
    assert image_source("docker.io/library/python:3.12") is None
    assert image_source("127.0.0.1:5000/vf/python:3.11") == "127.0.0.1:5000"
    assert image_source("ghcr.io/o/r:t") == "ghcr.io"
    assert image_source("Not An Image") is None and image_source(None) is None
    monkeypatch.setenv("VF_REGISTRY_MIRROR", "mirror.internal:5000/")
    assert image_source("python:3.11-slim") == "mirror.internal:5000"
    assert image_source("mkyacine/autodiff:latest") == "mirror.internal:5000"


def rows(*questions: str) -> Dataset:
    return Dataset.from_list([{"question": q, "answer": ""} for q in questions])


def test_which_tier_runs_the_image(monkeypatch):
    """Without a registry configured nothing changes (Python images on the local runtime,
    other images refused, now naming the setting); with one, the image tier."""
    monkeypatch.delenv("VF_REGISTRY_MIRROR", raising=False)
    monkeypatch.delenv("VF_SANDBOX_PROVIDER", raising=False)
    local = SandboxEnv(dataset=rows("q"), docker_image="python:3.11-slim")
    assert not local.runs_images and local.spec.runtime.packages == ()
    with pytest.raises(vf.ConfigError, match="VF_REGISTRY_MIRROR"):
        SandboxEnv(dataset=rows("q"), docker_image="mkyacine/autodiff:latest")
    named = SandboxEnv(dataset=rows("q"), docker_image="127.0.0.1:5000/vf/app:1")
    assert named.runs_images and tier_of(named.provider).name == "image"

    monkeypatch.setenv("VF_REGISTRY_MIRROR", "127.0.0.1:5000")
    env = SandboxEnv(dataset=rows("q"), docker_image="mkyacine/autodiff:latest")
    assert env.runs_images and tier_of(env.provider).name == "image"
    assert env.spec.image == "mkyacine/autodiff:latest"
    # the image brings its software: runtime packages become a pip install at start
    py = PythonEnv(dataset=rows("q"), pip_install_packages="numpy sympy", network=True)
    assert py.runs_images and py.spec.runtime.packages == () and py.spec.network
    assert py.install_packages == ("numpy", "sympy")
    assert [what for what, _ in py.sandbox_settings.start_steps(py.sandbox_request)] == [
        "package install"
    ]
    # opting out keeps the local runtime
    assert not SandboxEnv(dataset=rows("q"), ignore_docker_image=True).runs_images
    # a chosen tier decides: bwrap stands in for Python images (and refuses others), the
    # image tier runs them
    monkeypatch.setenv("VF_SANDBOX_PROVIDER", "bwrap")
    assert not SandboxEnv(dataset=rows("q")).runs_images
    with pytest.raises(vf.ConfigError, match="cannot run in a local sandbox"):
        SandboxEnv(dataset=rows("q"), docker_image="mkyacine/autodiff:latest")
    monkeypatch.setenv("VF_SANDBOX_PROVIDER", "image")
    assert SandboxEnv(dataset=rows("q")).runs_images


# -- running them ----------------------------------------------------------------------------
def wheel(name: str, version: str, files: dict[str, str]) -> bytes:
    """A minimal pure-Python wheel (METADATA, WHEEL, RECORD with hashes)."""
    info = f"{name}-{version}.dist-info"
    contents = {
        **files,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    record = []
    for path, text in contents.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{path},sha256={digest.decode()},{len(text.encode())}")
    contents[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for path, text in contents.items():
            z.writestr(path, text)
    return buf.getvalue()


class PipIndex:
    """A PEP 503 simple index on 127.0.0.1 serving one wheel."""

    def __init__(self, filename: str, data: bytes) -> None:
        project = filename.split("-")[0]
        pages = {
            f"/simple/{project}/": f'<a href="/files/{filename}">{filename}</a>'.encode(),
            f"/files/{filename}": data,
        }

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                body = pages.get(self.path)
                self.send_response(200 if body is not None else 404)
                kind = "text/html" if self.path.startswith("/simple/") else "application/zip"
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()
                self.wfile.write(body or b"")

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/simple"
        threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def mirror():
    """The registry serving `python:3.11-slim` as VF_REGISTRY_MIRROR, a pip index, and the
    image cache in a temporary directory (the default provider's store reads it)."""
    if REASON is not None:
        pytest.skip(f"image tier: {REASON}")
    cache = Path(tempfile.mkdtemp(prefix="vf-img-env-"))
    os.chmod(cache, 0o755)  # the sandbox uid reaches the stage mount point below it
    index = PipIndex(
        "vfdemo-1.0-py3-none-any.whl",
        wheel("vfdemo", "1.0", {"vfdemo/__init__.py": "VALUE = 42\n"}),
    )
    with LocalRegistry() as registry, pytest.MonkeyPatch.context() as mp:
        registry.add_image("library/python", "3.11-slim", python_image_layers())
        mp.setenv("VF_REGISTRY_MIRROR", registry.host)
        mp.delenv("VF_SANDBOX_PROVIDER", raising=False)
        mp.setattr(image_module, "CACHE", cache)
        yield registry, index
    index.close()
    shutil.rmtree(cache, ignore_errors=True)


def client_for(srv):
    return vf.OpenAIClient(srv.base_url, api_key="x", retry_base_delay=0.01)


GPTWORLD_MAIN = "import sys\nprint(f\"[4][{sys.argv[1] == 'win'}]\")\n"


class ContainerStyleEnv(SandboxEnv):
    """What gptworld (prime-environments) does: mkdir /app in setup_state with the bash tool,
    upload a helper into /app, run it in post_rollout with the model's answer; plus a
    start command that prepares /root and idles, as the codebase-search environments do."""

    async def setup_state(self, state, **kwargs):
        state = await super().setup_state(state, **kwargs)
        sid, ss = state["sandbox_id"], state["sandbox_state"]
        await self.bash("mkdir /app && mkdir /app/utils", sandbox_id=sid, sandbox_state=ss)
        helper = Path(tempfile.mkdtemp()) / "main.py"
        helper.write_text(GPTWORLD_MAIN)
        await self.sandbox_client.upload_file(sid, "/app/main.py", str(helper))
        shutil.rmtree(helper.parent)
        return state

    async def post_rollout(self, state):
        answer = state["completion"][-1]["content"].strip()
        r = await self.sandbox_client.execute_command(
            state["sandbox_id"], f"cd /app && python3 main.py {answer} && cat /root/prepared"
        )
        state["output"] = r.stdout


async def output_reward(state) -> float:
    return 1.0 if state.get("output") == "[4][True]\nby the start command\n" else 0.0


@needs_images
async def test_a_classic_container_env_runs_on_the_image_tier(mirror):
    """mkdir /app, an upload to /app, a start command writing /root, the bash tool anywhere in
    the root, and a rollout scored from a command run in post_rollout."""
    registry, _ = mirror

    def respond(body):
        if last_message(body)["role"] == "tool":
            return "win"
        return Reply(tool_calls=[{"name": "bash", "arguments": {"command": body_cmd}}])

    body_cmd = "ls /app && echo hi > /etc/motd && cat /etc/motd && id -un"
    env = ContainerStyleEnv(
        dataset=rows("play"),
        rubric=vf.Rubric(funcs=[output_reward]),
        docker_image="python:3.11-slim",
        start_command="bash -c 'mkdir -p /root && echo by the start command > /root/prepared "
        "&& tail -f /dev/null'",
        memory_gb=0.5,
        disk_size_gb=64 * MiB_IN_GB,
        pool_size=1,
    )
    assert env.runs_images
    try:
        with ScriptedServer(respond) as srv:
            client = client_for(srv)
            out = await env.evaluate(client, "m", num_examples=1, rollouts_per_example=2)
            await client.aclose()
    finally:
        await env.teardown()
    assert [r.get("error") for r in out["outputs"]] == [None, None], out["outputs"][0]
    assert [r["reward"] for r in out["outputs"]] == [1.0, 1.0]
    tool = next(m for m in out["outputs"][0]["completion"] if m["role"] == "tool")
    assert tool["content"] == "main.py\nutils\nhi\nsandbox"
    assert any(p.startswith("/v2/library/python/manifests/3.11-slim") for p in registry.requests)
    assert env.active_sandboxes == set()


@needs_images
async def test_disk_caps_the_writable_root(mirror):
    """`disk_size_gb` is the size of the overlay's writable layer: writes within it land
    anywhere in the root, a write past it fails saying the disk is full."""
    env = SandboxEnv(
        dataset=rows("q"),
        docker_image="python:3.11-slim",
        **{**SMALL, "disk_size_gb": 8 * MiB_IN_GB},
    )
    client = env.sandbox_client
    try:
        sandbox = await client.create(env.sandbox_request)
        await client.wait_for_creation(sandbox.id)
        r = await client.execute_command(
            sandbox.id, "dd if=/dev/zero of=/root/within bs=1M count=4 && ls /root"
        )
        assert r.exit_code == 0 and r.stdout == "within\n", r
        r = await client.execute_command(sandbox.id, "dd if=/dev/zero of=/app.bin bs=1M count=16")
        assert r.exit_code != 0 and "No space left on device" in r.stderr
        await client.execute_command(sandbox.id, "rm -f /app.bin")
        with pytest.raises(APIError, match=r"disk_size_gb: 8 MiB, is full"):
            await client.upload_bytes(sandbox.id, "/app/big.bin", b"x" * (12 << 20))
        await client.delete(sandbox.id)
    finally:
        await env.teardown()


@needs_images
async def test_start_commands_that_fail_or_never_finish_fail_creation(mirror):
    """A container whose start command exits non-zero is in ERROR; one that never finishes
    (a server as the last step) cannot be kept running here, and says so at its timeout."""
    env = SandboxEnv(
        dataset=rows("q"), docker_image="python:3.11-slim", start_command_timeout=4, **SMALL
    )
    client = env.sandbox_client
    try:
        failing = await client.create(
            env.sandbox_request.model_copy(
                update={
                    "start_command": "bash -c 'echo no such repo >&2; exit 3; tail -f /dev/null'"
                }
            )
        )
        with pytest.raises(SandboxNotRunningError, match="exited with status 3: no such repo"):
            await client.wait_for_creation(failing.id)
        assert (await client.get(failing.id)).status == "ERROR"
        server = await client.create(
            CreateSandboxRequest(
                docker_image="python:3.11-slim", start_command="sleep 30", memory_gb=0.5
            )
        )
        with pytest.raises(SandboxNotRunningError, match="did not finish within 4s"):
            await client.wait_for_creation(server.id)
        # a rollout whose start command fails ends with an infra error, not retried
        state = await env.setup_state(vf.State(input={"prompt": [], "answer": ""}))
        env.sandbox_request.start_command = "false"
        bad = await env.setup_state(vf.State(input={"prompt": [], "answer": ""}))
        await env.get_sandbox(state)  # the default start command only idles: ready
        with pytest.raises(StartCommandError):
            await env.get_sandbox(bad)
        assert isinstance(StartCommandError("x"), vf.InfraError)
        await env.release_sandbox(state)
        await env.release_sandbox(bad)
    finally:
        await env.teardown()


@needs_images
async def test_pip_install_with_network_and_a_python_env(mirror, caplog):
    """PythonEnv on the image tier: `pip_install_packages` are pip-installed into the image at
    start when the sandbox has the network (here a pip index on loopback, as
    `PIP_INDEX_URL`), and the REPL imports them; without the network pip cannot reach it."""
    assert HOST_PIP, "the test image's pip is the host's python3-pip (scripts/system-deps.sh)"
    _, index = mirror
    env = PythonEnv(
        dataset=rows("q"),
        docker_image="python:3.11-slim",
        pip_install_packages="vfdemo",
        network=True,
        environment_vars={"PIP_INDEX_URL": index.url},
        **SMALL,
    )
    with caplog.at_level(logging.WARNING, logger="verifiers.sandbox"):
        offline = SandboxEnv(
            dataset=rows("q"), docker_image="python:3.11-slim", runtime_packages=["vfdemo"],
            environment_vars={"PIP_INDEX_URL": index.url}, **SMALL,
        )  # fmt: skip
    assert "pip needs the network" in caplog.text and offline.install_packages == ()
    state = await env.setup_state(vf.State(input={"prompt": [], "answer": ""}))
    other = await offline.setup_state(vf.State(input={"prompt": [], "answer": ""}))
    try:
        out = await env.python("import vfdemo\nvfdemo.VALUE", state["sandbox_id"])
        assert out == "Out[1]: 42"
        r = await offline.sandbox_client.execute_command(
            other["sandbox_id"], "python3 -m pip install -q --retries 0 --timeout 2 vfdemo"
        )
        assert r.exit_code != 0
    finally:
        await env.release_sandbox(state)
        await offline.release_sandbox(other)
        await env.teardown()
        await offline.teardown()
