"""The classic SandboxEnv surface that public environments reach into, on a real local sandbox:
`env.sandbox_client` (upstream's AsyncSandboxClient calls), `sandbox_request`,
`destroy_sandbox`, `post_rollout`, the `sandbox_id`/`sandbox_state` state keys, the classic
constructor arguments, and PythonEnv's `python_state`."""

import asyncio
import sys
import types

import pytest
from datasets import Dataset

import verifiers as vf
from verifiers.envs.python_env import PythonEnv, format_cell
from verifiers.envs.sandbox_client import (
    APIError,
    CommandTimeoutError,
    SandboxNotRunningError,
)
from verifiers.envs.sandbox_env import (
    AdvancedConfigs,
    CreateSandboxRequest,
    SandboxEnv,
    SandboxState,
)
from verifiers.sandbox import BwrapProvider, ProcessProvider
from verifiers.testing import Reply, ScriptedServer
from verifiers.testing.responders import last_message, last_text

GiB = 2**30


def local_provider():
    """The strongest local provider that runs here (bwrap; else the process tier)."""
    return BwrapProvider() if BwrapProvider.unavailable_reason() is None else ProcessProvider()


def rows(*questions, **info):
    return Dataset.from_list([{"question": q, "answer": "", "info": info} for q in questions])


def small_env(env_class=SandboxEnv, **arguments):
    """`env_class` on the local provider over one row, with small limits and no warm pool;
    `arguments` add to or replace these."""
    defaults = dict(
        provider=local_provider(), dataset=rows("q"), memory_gb=0.25, disk_size_gb=0.02, pool_size=0
    )
    return env_class(**(defaults | arguments))


async def started(env, **input):
    """A rollout's state after `env.setup_state` (its sandbox created), for an empty prompt."""
    return await env.setup_state(vf.State(input={"prompt": [], "answer": "", **input}))


async def say_done(body):
    return "done"


def bash_then_done(body):
    if last_message(body)["role"] == "tool":
        return "done"
    return Reply(tool_calls=[{"name": "bash", "arguments": {"command": last_text(body)}}])


def exec_reward(state) -> float:
    return 1.0 if state.get("exec_result", {}).get("returncode") == 0 else 0.0


async def test_post_rollout_grades_through_sandbox_client(tmp_path, client_for):
    """upstream 0.1.12 / 0.3.1 legacy/envs/sandbox_env.py as tensor_puzzles uses it: a
    post_rollout that uploads a helper, then `wait_for_creation` and `execute_command(id, cmd,
    timeout=60)`, reading `.exit_code`, `.stdout`, `.stderr`."""
    helper = tmp_path / "check.py"
    helper.write_text("import sys\nprint('graded', sys.argv[1])\n")

    class Graded(SandboxEnv):
        async def post_rollout(self, state):
            sid = state["sandbox_id"]
            await self.sandbox_client.wait_for_creation(sid)
            up = await self.sandbox_client.upload_file(sid, "/tmp/utils/check.py", str(helper))
            assert up.success and up.size == helper.stat().st_size
            result = await self.sandbox_client.execute_command(
                sid, "python3 /tmp/utils/check.py ok; echo warn >&2", timeout=60
            )
            state["exec_result"] = {
                "returncode": result.exit_code,
                "stdout": result.stdout,
                "stderr": result.stderr,
            }

    env = small_env(Graded, rubric=vf.Rubric(funcs=[exec_reward]))
    with ScriptedServer(say_done) as srv:
        out = await env.evaluate(
            client_for(srv), "m", num_examples=1, state_columns=["exec_result"]
        )
    o = out["outputs"][0]
    assert o["reward"] == 1.0, o.get("error")
    assert o["exec_result"] == {"returncode": 0, "stdout": "graded ok\n", "stderr": "warn\n"}
    assert env.active_sandboxes == set()
    await env.teardown()


async def test_client_files_timeouts_and_errors(tmp_path):
    """upstream 0.3.1 (prime-sandboxes AsyncSandboxClient): upload_bytes/read_file/
    download_file round trips, a nonzero exit is a result not an error, a timeout raises
    CommandTimeoutError, an unknown id is an APIError, and bash reports a timeout as
    "Error: Command timed out after Ns" recording the timeout as its execution time."""
    env = small_env(timeout_per_command_seconds=1)
    state = await started(env)
    sid, client = state["sandbox_id"], env.sandbox_client
    try:
        info = await client.get(sid)
        assert info.id == sid and info.status in {"PENDING", "RUNNING"}
        req = env.sandbox_request  # the info repeats the request's name, image, limits, labels
        assert (info.name, info.docker_image, info.memory_gb, info.timeout_minutes) == (
            req.name,
            req.docker_image,
            req.memory_gb,
            req.timeout_minutes,
        )
        assert (info.cpu_cores, info.disk_size_gb, info.gpu_count, info.labels) == (
            req.cpu_cores,
            req.disk_size_gb,
            req.gpu_count,
            req.labels,
        )
        await client.wait_for_creation(sid)
        assert (await client.get(sid)).status == "RUNNING"

        await client.upload_bytes(sid, "data/blob.bin", b"\x00\x01abc", "blob.bin")
        read = await client.read_file(sid, "data/blob.bin")
        assert read.size == 5 and read.content.endswith("abc")
        target = tmp_path / "down" / "blob.bin"
        await client.download_file(sid, "data/blob.bin", str(target))
        assert target.read_bytes() == b"\x00\x01abc"

        failed = await client.execute_command(sid, "echo out; echo err >&2; exit 3")
        assert (failed.exit_code, failed.stdout, failed.stderr) == (3, "out\n", "err\n")
        here = await client.execute_command(sid, "pwd", working_dir="data", env={"A": "1"})
        assert here.stdout.strip().endswith("/data")
        missing = await client.execute_command(sid, "pwd", working_dir="/nope")
        assert missing.exit_code != 0 and "cd: /nope: No such file or directory" in missing.stderr
        heredoc = "cat <<'EOF'\nline\nEOF"
        assert (await client.execute_command(sid, heredoc, working_dir="data")).stdout == "line\n"

        with pytest.raises(CommandTimeoutError):
            await client.execute_command(sid, "sleep 10", timeout=0.5)
        with pytest.raises(APIError):
            await client.execute_command("no-such-id", "true")
        with pytest.raises(APIError):
            await client.read_file(sid, "missing.txt")

        ss: SandboxState = state["sandbox_state"]
        assert await env.bash("sleep 10", sid, ss) == "Error: Command timed out after 1s"
        assert ss["command_execution_times"][-1] == 1.0 and ss["ready"] is True
        assert await env.bash("printf ' a \\n'; echo ' b ' >&2", sid, ss) == "a\nstderr:\nb"
        assert await env.bash("true", sid, ss) == "(no output)"
    finally:
        await env.release_sandbox(state)
    with pytest.raises(APIError):
        await client.get(sid)
    await env.teardown()


async def test_timeout_errors_match_prime_sandboxes_classes_when_imported(monkeypatch):
    """upstream 0.1.12 humaneval / mini_swe_agent_plus catch `prime_sandboxes`'
    CommandTimeoutError and SandboxNotRunningError around `self.sandbox_client` calls: when the
    environment imported prime_sandboxes, ours are subclasses of those classes too."""
    prime = types.ModuleType("prime_sandboxes")

    class PrimeTimeout(RuntimeError):
        def __init__(self, sandbox_id, command, timeout):
            super().__init__("prime")

    class PrimeNotRunning(RuntimeError):
        pass

    PrimeTimeout.__name__ = "CommandTimeoutError"
    PrimeNotRunning.__name__ = "SandboxNotRunningError"
    prime.CommandTimeoutError = PrimeTimeout
    prime.SandboxNotRunningError = PrimeNotRunning
    monkeypatch.setitem(sys.modules, "prime_sandboxes", prime)

    env = small_env(docker_image="registry.example/swe:1", ignore_docker_image=True)
    state = await started(env)
    try:
        with pytest.raises(PrimeTimeout) as caught:
            await env.sandbox_client.execute_command(state["sandbox_id"], "sleep 5", timeout=0.3)
        assert isinstance(caught.value, CommandTimeoutError) and caught.value.timeout == 0.3
        env.ignore_docker_image = False
        other = await env.sandbox_client.create(
            env.sandbox_request.model_copy(update={"docker_image": "registry.example/swe:1"})
        )
        with pytest.raises(PrimeNotRunning) as dead:
            await env.sandbox_client.wait_for_creation(other.id)
        assert isinstance(dead.value, SandboxNotRunningError)
        assert isinstance(dead.value, vf.SandboxError)  # infra: masked, not scored 0
        assert (await env.sandbox_client.get(other.id)).status == "ERROR"
    finally:
        await env.release_sandbox(state)
    await env.teardown()


async def test_destroy_sandbox_from_a_stop_condition_runs_post_rollout_once(client_for):
    """upstream 0.3.1 legacy/envs/sandbox_env.py `destroy_sandbox(state)` (post_rollout, then
    delete), called by transformerpuzzles and llm_training_puzzles from a @vf.stop condition.
    Upstream's cleanup would run post_rollout a second time on the deleted sandbox; ours runs
    it once."""
    calls: list[str] = []

    class Puzzles(SandboxEnv):
        @vf.stop(priority=10)
        async def solved(self, state) -> bool:
            if len(state["trajectory"]) >= 2:  # the model has seen the tool's output
                await self.destroy_sandbox(state)
                return True
            return False

        async def post_rollout(self, state):
            out = await self.bash("cat answer.txt", state["sandbox_id"], state["sandbox_state"])
            calls.append(out)
            state["graded"] = out

    async def graded(state) -> float:
        return 1.0 if state.get("graded") == "42" else 0.0

    env = small_env(Puzzles, dataset=rows("echo 42 > answer.txt"), rubric=vf.Rubric(funcs=[graded]))
    with ScriptedServer(bash_then_done) as srv:
        out = await env.evaluate(client_for(srv), "m", num_examples=1)
    assert out["outputs"][0]["reward"] == 1.0, out["outputs"][0].get("error")
    assert calls == ["42"]
    assert env.active_sandboxes == set()
    await env.teardown()


async def test_own_setup_state_creates_through_the_client_and_is_released(client_for):
    """upstream 0.1.12 mini_swe_agent_plus / deepswe: setup_state (not calling super) creates
    its sandbox with `sandbox_client.create(self.sandbox_request)`, stores `sandbox.id` in
    `state["sandbox_id"]`, recreates with `destroy_sandbox(sandbox_id)` (the 0.1.6-0.1.7
    form), runs a long command as a background job, and its sandbox still closes at the end."""
    seen: dict = {}

    class OwnSetup(SandboxEnv):
        async def setup_state(self, state, **kwargs):
            first = await self.sandbox_client.create(self.sandbox_request)
            await self.sandbox_client.wait_for_creation(first.id, max_attempts=12000)
            await self.destroy_sandbox(first.id)
            seen["first_status"] = first.status
            request = self.sandbox_request.model_copy(update={"labels": ["mine"]})
            sandbox = await self.sandbox_client.create(request)
            await self.sandbox_client.wait_for_creation(sandbox.id)
            state["sandbox_id"] = sandbox.id
            return state

        async def post_rollout(self, state):
            sid = state["sandbox_id"]
            job = await self.sandbox_client.start_background_job(
                sid, "sleep 0.3; echo finished; exit 4", working_dir="/tmp"
            )
            status = await self.sandbox_client.get_background_job(sid, job)
            polls = 0
            while not status.completed:
                polls += 1
                await asyncio.sleep(0.1)
                status = await self.sandbox_client.get_background_job(sid, job)
            log = await self.sandbox_client.execute_command(sid, f"cat {job.stdout_log_file}")
            seen.update(polls=polls, exit=status.exit_code, stdout=status.stdout, log=log.stdout)
            seen["labels"] = (await self.sandbox_client.get(sid)).labels

    env = small_env(OwnSetup)
    with ScriptedServer(say_done) as srv:
        out = await env.evaluate(client_for(srv), "m", num_examples=1)
    assert out["outputs"][0].get("error") is None, out["outputs"][0]["error"]
    assert seen["polls"] >= 1 and seen["exit"] == 4
    assert seen["stdout"] == "finished\n" == seen["log"] and seen["labels"] == ["mine"]
    assert env.active_sandboxes == set()
    await env.teardown()


async def test_bulk_delete_by_id_and_label():
    """upstream 0.3.1 AsyncSandboxClient.bulk_delete(sandbox_ids=..., labels=...) and
    SandboxEnv.bulk_delete_sandboxes(global_ids)."""
    env = small_env()
    client = env.sandbox_client
    tagged = [
        await client.create(env.sandbox_request.model_copy(update={"labels": ["a", "b"]}))
        for _ in range(2)
    ]
    plain = await client.create(env.sandbox_request)
    other = await client.create(env.sandbox_request)
    res = await client.bulk_delete(labels=["a"])
    assert sorted(res.succeeded) == sorted(s.id for s in tagged) and res.failed == []
    res = await client.bulk_delete(sandbox_ids=[plain.id, "gone"])
    assert res.succeeded == [plain.id] and res.failed[0]["id"] == "gone"
    assert env.active_sandboxes == {other.id}
    await env.bulk_delete_sandboxes([other.id])
    assert env.active_sandboxes == set()
    await env.teardown()


async def test_constructor_arguments_become_local_limits_and_request():
    """upstream 0.1.12 SandboxEnv(sandbox_name, docker_image, start_command, cpu_cores,
    memory_gb, disk_size_gb, gpu_count, timeout_minutes, environment_vars, team_id,
    advanced_configs, labels, sandbox_client_*): limits and environment apply locally, the
    rest is kept on `sandbox_request`; SandboxState and AdvancedConfigs import from
    verifiers.envs.sandbox_env."""
    env = SandboxEnv(
        provider=local_provider(),
        dataset=rows("q"),
        sandbox_name="polars-env",
        docker_image="python:3.12-slim",
        cpu_cores=2,
        memory_gb=0.5,
        disk_size_gb=0.03,
        timeout_minutes=7,
        environment_vars={"GREETING": "hello"},
        team_id="team-1",
        advanced_configs=AdvancedConfigs(shm="1g"),
        labels=["x"],
        sandbox_client_max_workers=8,
        pool_size=0,
    )
    spec = env.spec
    assert (spec.cpu, spec.memory, spec.disk, spec.lifetime) == (
        2.0,
        GiB // 2,
        int(0.03 * GiB),
        420,
    )
    req = env.sandbox_request
    assert isinstance(req, CreateSandboxRequest) and req.name == "polars-env"
    assert req.team_id == "team-1" and req.labels == ["x"] and req.advanced_configs.shm == "1g"
    assert env.get_sandbox_spec(vf.State()) == spec  # unchanged request: the env's spec (pool)
    bigger = env.sandbox_settings.spec_for_request(
        req.model_copy(update={"memory_gb": 1, "cpu_cores": 1})
    )
    assert (bigger.memory, bigger.cpu) == (GiB, 1.0)

    state = await started(env)
    try:
        assert set(state["sandbox_state"]) == set(SandboxState.__annotations__)
        res = await env.sandbox_client.execute_command(state["sandbox_id"], "echo $GREETING")
        assert res.stdout == "hello\n"
        state["working_dir"] = "/tmp"  # upstream 0.1.9+: bash runs in state["working_dir"]
        args = env.update_tool_args("bash", {"command": "pwd"}, [], state)
        assert await env.bash(**args) == "/tmp"
    finally:
        await env.release_sandbox(state)
    await env.teardown()


def test_images_and_gpus_that_cannot_run_locally_are_refused_at_load():
    """upstream 0.1.12 autodiff (docker_image="mkyacine/autodiff:latest") and math_python
    (gpu_count): a local sandbox cannot honour them, so loading says so instead of scoring
    every rollout 0; Python images run on the local runtime."""
    for image in ("python:3.11-slim", "python", "docker.io/library/python:3.12"):
        SandboxEnv(dataset=rows("q"), docker_image=image, provider=local_provider())
    with pytest.raises(vf.ConfigError, match="ignore_docker_image"):
        SandboxEnv(dataset=rows("q"), docker_image="mkyacine/autodiff:latest")
    with pytest.raises(vf.ConfigError, match="GPU"):
        SandboxEnv(dataset=rows("q"), gpu_count=1)
    env = SandboxEnv(dataset=rows("q"), docker_image="alpine/git", ignore_docker_image=True)
    assert env.sandbox_request.docker_image == "alpine/git"

    class RemoteLike(ProcessProvider):
        supports_images = True

    SandboxEnv(dataset=rows("q"), docker_image="mkyacine/autodiff:latest", provider=RemoteLike())
    # an image-capable provider still has no GPUs
    with pytest.raises(vf.ConfigError, match="GPU"):
        SandboxEnv(dataset=rows("q"), gpu_count=1, provider=RemoteLike())


async def test_post_rollout_in_its_0_1_7_form_gets_the_conversation(client_for):
    """upstream 0.1.7 SandboxEnv: `post_rollout(self, messages, state, **kwargs)` (humaneval
    still overrides it so), called with the conversation once the rollout is done."""
    got: dict = {}

    class OldStyle(SandboxEnv):
        async def post_rollout(self, messages, state, **kwargs):
            answer = next(m for m in reversed(messages) if m["role"] == "assistant")
            res = await self.sandbox_client.execute_command(state["sandbox_id"], "echo ran")
            got.update(answer=answer["content"], ran=res.stdout, first=messages[0]["role"])

    env = small_env(OldStyle)
    with ScriptedServer(say_done) as srv:
        out = await env.evaluate(client_for(srv), "m", num_examples=1)
    assert out["outputs"][0].get("error") is None
    assert got == {"answer": "done", "ran": "ran\n", "first": "user"}
    await env.teardown()


async def test_python_env_python_state_and_upstream_cell_format():
    """upstream 0.1.12 / 0.3.1 legacy/envs/python_env.py: `state["python_state"]` (ready,
    execution_count, ready_wait_time), the tool's hidden arguments, and the cell layout:
    stdout, `stderr:` block, the traceback of a failing cell without a header, `Out[n]`."""
    env = small_env(PythonEnv, pip_install_packages="", memory_gb=0.5)
    assert set(env.tool_defs[0]["parameters"]["properties"]) == {"code"}
    assert env.sandbox_request.name == "python-env"
    state = await started(env)
    try:
        assert state["python_state"] == {
            "ready": False,
            "execution_count": 0,
            "ready_wait_time": 0.0,
        }
        args = env.update_tool_args("python", {"code": "x = 6\nx * 7"}, [], state)
        assert await env.python(**args) == "Out[1]: 42"
        assert state["python_state"]["ready"] and state["python_state"]["execution_count"] == 1
        args = env.update_tool_args(
            "python",
            {"code": "import sys\nprint('a'); print('w', file=sys.stderr); 1/0"},
            [],
            state,
        )
        out = await env.python(**args)
        assert out.startswith("a\nstderr:\nw\nTraceback (most recent call last):")
        assert out.rstrip().endswith("ZeroDivisionError: division by zero")
    finally:
        await env.release_sandbox(state)
    await env.teardown()
    assert format_cell({"status": "ok", "stdout": "", "stderr": "", "result": None}, 3) == (
        "(no output)"
    )
    reset = {"status": "error", "stdout": "", "stderr": "timed out after 1s; REPL state was reset\n",
             "result": None, "execution_count": 0}  # fmt: skip
    assert format_cell(reset, 0) == "timed out after 1s; REPL state was reset"


async def test_tool_definitions_and_per_rollout_request_as_upstream():
    """upstream 0.3.1 legacy/envs/sandbox_env.py and python_env.py: the model sees `bash`
    ("Execute `command` inside persistent sandbox container.", one `command` argument) and
    `python` ("Execute `code` inside persistent Python REPL."); `get_sandbox_request(state)`
    varies the sandbox per rollout; `_wait_for_sandbox_ready` marks the sandbox ready."""
    bash_def = SandboxEnv(dataset=rows("q"), provider=local_provider()).tool_defs[0]
    assert bash_def["name"] == "bash"
    assert bash_def["description"] == "Execute `command` inside persistent sandbox container."
    assert list(bash_def["parameters"]["properties"]) == ["command"]
    py_def = PythonEnv(dataset=rows("q"), pip_install_packages="").tool_defs[0]
    assert py_def["description"] == "Execute `code` inside persistent Python REPL."

    class PerRollout(SandboxEnv):
        def get_sandbox_request(self, state):
            level = state["info"]["level"]
            return self.sandbox_request.model_copy(update={"environment_vars": {"LEVEL": level}})

    env = small_env(PerRollout, dataset=rows("q", level="hard"))
    state = await started(env, info={"level": "hard"})
    try:
        await env._wait_for_sandbox_ready(state["sandbox_state"], state["sandbox_id"])
        assert state["sandbox_state"]["ready"] is True
        assert await env.bash("echo $LEVEL", state["sandbox_id"], state["sandbox_state"]) == "hard"
    finally:
        await env.release_sandbox(state)
    await env.teardown()


def test_requests_of_other_clients_are_read_by_their_fields():
    """upstream 0.1.12 mini_swe_agent_plus builds requests with prime_sandboxes'
    CreateSandboxRequest (newer releases nest `start_command` as StartCommand(command=...));
    the local client reads any such object by its fields."""
    from pydantic import BaseModel

    from verifiers.envs.sandbox_client import as_request

    class StartCommand(BaseModel):
        command: str

    class PrimeRequest(BaseModel):
        name: str
        docker_image: str
        start_command: StartCommand
        cpu_cores: float = 2
        memory_gb: float = 4
        disk_size_gb: float | None = None
        labels: list[str] = []

    req = as_request(
        PrimeRequest(
            name="x", docker_image="python:3.11", start_command=StartCommand(command="sleep 1")
        )
    )
    assert (req.name, req.start_command, req.cpu_cores, req.memory_gb) == ("x", "sleep 1", 2, 4)
    assert req.disk_size_gb == 5  # unset there: the classic default


async def test_failing_post_rollout_is_recorded_and_releases_the_sandbox(client_for):
    """upstream 0.3.1 legacy/envs/sandbox_env.py + multiturn_env.py: an exception in
    post_rollout (run by the destroy_sandbox cleanup) propagates out of the rollout. Ours
    records it as the rollout's error (reward NaN, never a silent 0) and closes the sandbox
    at once."""

    class Broken(SandboxEnv):
        async def post_rollout(self, state):
            raise RuntimeError("grader bug")

    env = small_env(Broken)
    with ScriptedServer(say_done) as srv:
        client = client_for(srv)
        state = await env.rollout(env.eval_inputs(1)[0], client, "m")
    assert "grader bug" in str(state["error"])
    assert env.active_sandboxes == set()
    await env.teardown()
