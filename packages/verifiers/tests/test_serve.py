"""verifiers.serve: real env-server processes and the real client over real ZeroMQ sockets,
against verifiers.testing.ScriptedServer as the model.

This module is also the environment the servers load (`load_environment` below): the worker
processes are spawned, and spawn hands them this process's sys.path.
"""

from __future__ import annotations

import asyncio
import math
import multiprocessing as mp
import os
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import verifiers as vf
from verifiers.errors import ConfigError
from verifiers.serve import (
    EnvClientPool,
    EnvWorker,
    ServerError,
    ServerState,
    ServerTimeoutError,
    ZMQEnvClient,
    ZMQEnvServer,
    get_free_port,
    spawn_env_server,
)
from verifiers.testing import ScriptedServer
from verifiers.testing.processes import stop

ENV_ID = "test_serve"  # this module
FAST_HEALTH = dict(health_check_interval=0.1, health_check_timeout=0.3, max_failed_health_checks=3)
HANG_GUARD = 120.0  # seconds: a hung client fails the test instead of hanging the suite


def worker_pid(**_: Any) -> float:
    return float(os.getpid())


def load_environment(num_examples: int = 6, with_pid: bool = False, broken_reward: bool = False):
    """`arithmetic`, optionally with the serving process's pid as a metric and a reward
    function that raises (so the reward is NaN)."""
    from verifiers.examples import arithmetic

    env = arithmetic.load_environment(num_examples=num_examples)
    if with_pid:
        env.rubric.add_metric(worker_pid)
    if broken_reward:

        def broken(**_: Any) -> float:
            raise ValueError("reward function bug")

        env.rubric.add_reward_func(broken)
    return env


# -- helpers -----------------------------------------------------------------------------------
def spawn_server(
    env_args: dict[str, Any],
    num_workers: int = 1,
    address: str | None = None,
    log_dir: str | None = None,
) -> tuple[str, mp.Process]:
    """Start a server process the way prime-rl v0.5.0's `spawn_env_server` does."""
    address = address or f"tcp://127.0.0.1:{get_free_port()}"
    process = mp.get_context("spawn").Process(
        target=ZMQEnvServer.run_server,
        args=(ENV_ID, env_args, {}, "INFO" if log_dir else "WARNING", log_dir),
        kwargs=dict(address=address, console_logging=True, num_workers=num_workers),
        daemon=False,
    )
    process.start()
    return address, process


def children(pid: int) -> list[int]:
    """The worker processes of server `pid` (its spawned children, not helper processes)."""
    path = Path(f"/proc/{pid}/task/{pid}/children")
    found = [int(p) for p in path.read_text().split()] if path.exists() else []
    return [c for c in found if b"spawn_main" in _cmdline(c)]


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:  # it exited meanwhile
        return b""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie has exited; it only waits for its parent to reap it
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split(")")[-1].split()[0] != "Z"


def rows(n: int = 6, **env_args: Any) -> list[dict[str, Any]]:
    data = load_environment(num_examples=n, **env_args).get_dataset().to_list()
    return [{**r, "example_id": i} for i, r in enumerate(data)]


def comparable(out: dict[str, Any]) -> dict[str, Any]:
    """An output record without what differs between two runs (timings, process ids, the
    model server's response ids)."""
    out = {k: v for k, v in out.items() if k not in ("timing", "worker_pid")}
    out["metrics"] = {k: v for k, v in out["metrics"].items() if k != "worker_pid"}
    if "trajectory" in out:
        out["trajectory"] = [
            {**step, "response": {**step["response"], "id": None}} for step in out["trajectory"]
        ]
    return out


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, HANG_GUARD))


@pytest.fixture(scope="module", autouse=True)
def _this_module_importable() -> Iterator[None]:
    """Spawned processes start from this process's sys.path: put this file's directory on it
    so the workers can import this module as the environment `test_serve`."""
    here = str(Path(__file__).parent)
    sys.path.insert(0, here)
    yield
    sys.path.remove(here)


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedServer]:
    with ScriptedServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("env-server-logs")


@pytest.fixture(scope="module")
def served(log_dir: Path) -> Iterator[str]:
    """One server with two workers for the tests that do not kill anything."""
    address, process = spawn_server({"with_pid": True}, num_workers=2, log_dir=str(log_dir))
    yield address
    stop(process)


# -- tests ---------------------------------------------------------------------------------------
def test_server_results_equal_in_process_run(model: ScriptedServer, served: str) -> None:
    """upstream 0.1.12 serve/client/env_client.py: run_rollout / run_group on a server return
    what env.run_rollout / env.run_group return in process (prime-rl v0.5.0 vf_utils calls
    either, depending on whether the env has an env_client)."""
    inputs = rows(6, with_pid=True)
    group = [dict(inputs[1]) for _ in range(3)]
    config = vf.ClientConfig(api_base_url=model.base_url)
    # what prime-rl asks vLLM for: token ids and logprobs
    sampling = {"temperature": 0.0, "logprobs": True, "extra_body": {"return_token_ids": True}}

    async def remote() -> tuple[dict[str, Any], list[dict[str, Any]]]:
        client = ZMQEnvClient(address=served, name=ENV_ID, **FAST_HEALTH)
        try:
            await client.wait_for_server_startup(timeout=HANG_GUARD)
            one = await client.run_rollout(inputs[0], config, "mock-model", sampling)
            many = await client.run_group(
                group, config, "mock-model", sampling, state_columns=["trajectory"]
            )
            return one, many
        finally:
            await client.close()

    one, many = run(remote())
    env = load_environment(with_pid=True)

    async def local() -> tuple[dict[str, Any], list[dict[str, Any]]]:
        one = await env.run_rollout(inputs[0], config, "mock-model", sampling)
        many = await env.run_group(
            group, config, "mock-model", sampling, state_columns=["trajectory"]
        )
        return one, many

    local_one, local_many = run(local())
    assert comparable(one) == comparable(local_one)
    assert [comparable(o) for o in many] == [comparable(o) for o in local_many]
    assert len(many[0]["trajectory"]) == 1 and many[0]["trajectory"][0]["tokens"] is not None
    assert one["worker_pid"] != os.getpid()  # it really ran elsewhere


def test_requests_spread_over_workers(model: ScriptedServer, served: str) -> None:
    """upstream 0.1.12 serve/server/env_router.py: requests go to the least-busy worker."""
    config = vf.ClientConfig(api_base_url=model.base_url)
    model.latency_ms = 300  # keep the first requests in flight while the others are sent

    async def go() -> list[dict[str, Any]]:
        client = ZMQEnvClient(address=served, **FAST_HEALTH)
        try:
            await client.wait_for_server_startup(timeout=HANG_GUARD)
            return list(
                await asyncio.gather(
                    *(client.run_rollout(r, config, "mock-model", {}) for r in rows(4))
                )
            )
        finally:
            await client.close()

    try:
        outs = run(go())
    finally:
        model.latency_ms = 0
    assert all(o["error"] is None for o in outs)
    assert len({o["worker_pid"] for o in outs}) == 2


def test_server_and_workers_log_to_log_dir(served: str, log_dir: Path) -> None:
    """upstream 0.1.12 env_server.py / env_worker.py: with log_dir the server logs to
    env_server.log and worker i to env_worker_{i}.log (prime-rl v0.5.0 passes log_dir)."""

    async def up() -> None:
        client = ZMQEnvClient(address=served, **FAST_HEALTH)
        try:
            await client.wait_for_server_startup(timeout=HANG_GUARD)
        finally:
            await client.close()

    run(up())
    files = ZMQEnvServer.get_all_log_files(str(log_dir), 2)
    assert [f.name for f in files] == ["env_server.log", "env_worker_0.log", "env_worker_1.log"]
    assert "listening on " + served in files[0].read_text()
    for worker_log in files[1:]:
        assert "serving test_serve" in worker_log.read_text()


def test_cancelling_a_request_cancels_the_rollout_on_the_server(served: str) -> None:
    """upstream 0.1.12 zmq_env_client.py / env_worker.py: a cancelled request sends an empty
    payload and the worker cancels the rollout (prime-rl#1939: it used to run on)."""
    started, cancelled = threading.Event(), threading.Event()

    async def hold(body: dict[str, Any]) -> str:
        started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()  # the worker's model request was aborted
            raise
        return "unreachable"

    async def go(base_url: str) -> bool:
        client = ZMQEnvClient(address=served, **FAST_HEALTH)
        try:
            await client.wait_for_server_startup(timeout=HANG_GUARD)
            config = vf.ClientConfig(api_base_url=base_url, max_retries=0)
            task = asyncio.create_task(client.run_rollout(rows(1)[0], config, "mock-model", {}))
            assert await asyncio.to_thread(started.wait, HANG_GUARD)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert client.num_pending == 0
            return await asyncio.to_thread(cancelled.wait, HANG_GUARD)
        finally:
            await client.close()

    with ScriptedServer(hold) as holding:
        assert run(go(holding.base_url))


def test_nan_reward_and_error_records_cross_the_wire(model: ScriptedServer) -> None:
    """Ours (upstream 0.1.12 sends records over msgpack, which keeps NaN; JSON does not): a
    rollout whose reward function raised keeps reward NaN and its error record through the
    server. And upstream 0.1.12 Environment.start_server's death pipe: the server started by
    spawn_env_server exits, workers included, once its parent's end of the pipe closes."""
    spawned = spawn_env_server(ENV_ID, {"broken_reward": True}, log_level="WARNING")
    config = vf.ClientConfig(api_base_url=model.base_url)

    async def go() -> tuple[dict[str, Any], list[int]]:
        client = ZMQEnvClient(address=spawned.address, **FAST_HEALTH)
        try:
            await client.wait_for_server_startup(timeout=HANG_GUARD)
            return await client.run_rollout(rows(1)[0], config, "mock-model", {}), children(
                spawned.process.pid
            )
        finally:
            await client.close()

    try:
        out, workers = run(go())
        spawned.death_pipe.close()
        spawned.process.join(HANG_GUARD)
        exitcode = spawned.process.exitcode
    finally:
        spawned.stop()
    assert math.isnan(out["reward"])
    assert out["error"]["stage"] == "scoring" and "reward function bug" in out["error"]["message"]
    assert exitcode == 0 and len(workers) == 1 and not alive(workers[0])


def test_kill_9_of_a_server_mid_rollout_gives_infra_error_records(model: ScriptedServer) -> None:
    """Ours: upstream 0.1.12 zmq_env_client.py fails in-flight requests of an unhealthy server
    with ServerError and retries them after recovery (raising after recovery_timeout); here
    they come back as records with error.infra=True as soon as the connection drops (the
    client's socket monitor, not the health checks), and the pool's other server
    takes the later requests. A server started again at the same address is used again
    (upstream's recovery: the client turns healthy on its next health probe)."""
    (addr_a, proc_a), (addr_b, proc_b) = (
        spawn_server({"with_pid": True}),
        spawn_server({"with_pid": True}),
    )
    config = vf.ClientConfig(api_base_url=model.base_url)
    inputs = rows(6, with_pid=True)

    restarted: list[mp.Process] = []

    async def go() -> tuple[list[dict[str, Any]], dict[str, Any], list[int], dict[str, Any]]:
        pool = EnvClientPool([addr_a, addr_b], name=ENV_ID, **FAST_HEALTH)
        try:
            await pool.wait_for_server_startup(timeout=HANG_GUARD)
            start = model.request_count
            model.latency_ms = 5_000  # every rollout is in flight when the server dies
            tasks = [
                asyncio.create_task(pool.run_rollout(r, config, "mock-model", {})) for r in inputs
            ]
            while model.request_count < start + len(inputs):
                await asyncio.sleep(0.05)
            workers_a = children(proc_a.pid)
            os.kill(proc_a.pid, signal.SIGKILL)
            outs = list(await asyncio.gather(*tasks))
            model.latency_ms = 0
            after = await pool.run_rollout(inputs[0], config, "mock-model", {})
            while any(alive(pid) for pid in workers_a):  # the orphaned worker exits by itself
                await asyncio.sleep(0.1)
            restarted.append(spawn_server({"with_pid": True}, address=addr_a)[1])
            while pool.clients[0].server_state is not ServerState.HEALTHY:
                await asyncio.sleep(0.1)
            # both idle and healthy: the pool's first pick is the restarted server
            again = await pool.run_rollout(inputs[1], config, "mock-model", {})
            return outs, after, workers_a, again
        finally:
            model.latency_ms = 0
            await pool.close()

    try:
        outs, after, workers_a, again = run(go())
    finally:
        for process in (proc_a, proc_b, *restarted):
            stop(process)
    lost = [o for o in outs if o["error"] is not None]
    ok = [o for o in outs if o["error"] is None]
    assert len(lost) == 3 and len(ok) == 3  # least-pending dispatch: three on each server
    for o in lost:
        assert o["error"]["infra"] is True and o["error"]["stage"] == "server"
        # the dropped connection fails them at once (before any health check does)
        assert "lost the connection to env server" in o["error"]["message"]
        assert o["trajectory"] == [] and math.isnan(o["reward"])
        assert "ServerError" in o["error"]["error_chain_repr"]  # what prime-rl logs
    assert len(workers_a) == 1
    assert after["error"] is None  # the surviving server serves the next request
    assert after["worker_pid"] in {o["worker_pid"] for o in ok}
    assert again["error"] is None and again["worker_pid"] not in {o["worker_pid"] for o in ok}


def test_kill_9_of_a_worker_gives_infra_error_records_and_a_new_worker(
    model: ScriptedServer,
) -> None:
    """Ours: upstream 0.1.12 env_router.py restarts a dead worker and re-sends its requests;
    here the server restarts it and answers its requests as infra failures at once."""
    address, process = spawn_server({"with_pid": True})
    config = vf.ClientConfig(api_base_url=model.base_url)
    inputs = rows(2, with_pid=True)

    async def go() -> tuple[dict[str, Any], dict[str, Any], int]:
        client = ZMQEnvClient(address=address, **FAST_HEALTH)
        try:
            await client.wait_for_server_startup(timeout=HANG_GUARD)
            (worker,) = children(process.pid)
            start = model.request_count
            model.latency_ms = 60_000
            task = asyncio.create_task(client.run_rollout(inputs[0], config, "mock-model", {}))
            while model.request_count == start:
                await asyncio.sleep(0.05)
            os.kill(worker, signal.SIGKILL)
            lost = await task
            model.latency_ms = 0
            return lost, await client.run_rollout(inputs[1], config, "mock-model", {}), worker
        finally:
            model.latency_ms = 0
            await client.close()

    try:
        lost, after, old_worker = run(go())
    finally:
        stop(process)
    assert lost["error"]["infra"] is True and lost["error"]["error"] == "WorkerDiedError"
    assert after["error"] is None and after["worker_pid"] != old_worker


def test_a_server_that_is_not_up_is_a_clear_timeout_error() -> None:
    """upstream 0.1.12 zmq_env_client.py: wait_for_server_startup raises TimeoutError naming
    the server when it does not become healthy in time; so does a request sent before."""
    address = f"tcp://127.0.0.1:{get_free_port()}"

    async def go(call: str) -> None:
        client = ZMQEnvClient(address=address, name="nobody", startup_timeout=0.5, **FAST_HEALTH)
        try:
            if call == "wait":
                await client.wait_for_server_startup()
            else:
                await client.run_rollout(rows(1)[0], vf.ClientConfig(), "m", {})
        finally:
            await client.close()

    for call in ("wait", "request"):
        with pytest.raises(ServerTimeoutError, match=r"nobody .* did not come up within 0.5s"):
            run(go(call))
    assert issubclass(ServerTimeoutError, TimeoutError)


def test_an_environment_that_fails_to_load_is_reported_at_startup() -> None:
    """Ours: upstream 0.1.12 restarts a worker that cannot load its environment forever and
    its client waits out startup_timeout; here the client raises the load error at once."""
    address = f"tcp://127.0.0.1:{get_free_port()}"
    process = mp.get_context("spawn").Process(
        target=ZMQEnvServer.run_server,
        args=("no_such_env_for_test_serve", {}, {}, "CRITICAL", None),
        kwargs=dict(address=address, console_logging=False),
    )
    process.start()

    async def go() -> None:
        client = ZMQEnvClient(address=address, startup_timeout=HANG_GUARD, **FAST_HEALTH)
        try:
            await client.wait_for_server_startup()
        finally:
            await client.close()

    try:
        with pytest.raises(ServerError, match="no_such_env_for_test_serve"):
            run(go())
    finally:
        stop(process)


def test_worker_loads_env_with_env_args_and_extra_env_kwargs() -> None:
    """upstream 0.1.12 env_worker.py: vf.load_environment(env_id, **env_args), then
    env.set_kwargs(**extra_env_kwargs) (prime-rl v0.5.0 passes both)."""
    worker = EnvWorker(
        ENV_ID,
        {"num_examples": 3},
        {"max_seq_len": 77, "score_rollouts": False},
        worker_id=0,
        worker_name="w",
        request_address="ipc:///tmp/unused",
        response_address="ipc:///tmp/unused",
    )
    env = worker.load_env()
    assert len(env.get_dataset()) == 3 and env.env_args == {"num_examples": 3}
    assert env.max_seq_len == 77 and env.score_rollouts is False


def test_client_config_must_be_a_config() -> None:
    """upstream 0.1.12 environment.py: in server mode the client must be a ClientConfig."""

    async def go() -> None:
        client = ZMQEnvClient(address="tcp://127.0.0.1:1")
        try:
            await client.run_rollout(rows(1)[0], object(), "m", {})
        finally:
            await client.close()

    with pytest.raises(ConfigError, match="needs a vf.ClientConfig"):
        run(go())
