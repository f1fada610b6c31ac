"""prime-rl's env servers on a Ray cluster (issue 25 item 4, with items 5 and 6): one call
places ZeroMQ env servers on the nodes and returns their addresses; unmodified prime-rl-style
clients (`ZMQEnvClient(address=...)`, `EnvClientPool(addresses)`) reach them; a node that dies
turns its rollouts into infra-error records without a hang; the keys an environment needs
reach its own servers only.

One real 2-node cluster (`verifiers.ray.testing.local_cluster`, everything on 127.0.0.1) for
the module. This module is also the environment the servers load (`load_environment` below):
its folder is put on PYTHONPATH before the cluster starts, so the nodes' processes import it.
"""

from __future__ import annotations

import asyncio
import math
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import verifiers as vf
from verifiers.errors import ConfigError
from verifiers.serve import SECRET_VAR, EnvClientPool, ServerError, ZMQEnvClient
from verifiers.testing import ScriptedServer

ENV_ID = "test_ray_env_servers"  # this module
JUDGE_VAR, JUDGE_KEY = "VF_TEST_RAY_JUDGE_KEY", "judge-key-for-this-environment-only"
UNNAMED_VAR = "VF_TEST_RAY_UNNAMED_KEY"  # set here too, but not named: must not travel
SECRET = "ray-env-server-secret-long-enough-for-curve-0"
FAST_HEALTH = dict(health_check_interval=0.2, health_check_timeout=0.5, max_failed_health_checks=3)
# A node removal on a loaded 2-core machine stalled the *surviving* server's answers for ~18 s
# once; checks that tolerate a minute keep it healthy, and the dead node's rollouts must come
# back through the dropped connection anyway (asserted by their message).
TOLERANT_HEALTH = dict(
    health_check_interval=0.5, health_check_timeout=2.0, max_failed_health_checks=120
)
HANG_GUARD = 120.0


def _pid(**_: Any) -> float:
    return float(os.getpid())


def _judge_key_len(**_: Any) -> float:
    return float(len(os.environ.get(JUDGE_VAR, "")))


def _unnamed_key_len(**_: Any) -> float:
    return float(len(os.environ.get(UNNAMED_VAR, "")))


def load_environment(**_: Any) -> vf.Environment:
    """`arithmetic`, with the serving process's pid and what it sees of the two variables."""
    from verifiers.examples import arithmetic

    env = arithmetic.load_environment(num_examples=4)
    for metric in (_pid, _judge_key_len, _unnamed_key_len):
        env.rubric.add_metric(metric)
    return env


def rows(n: int) -> list[dict[str, Any]]:
    data = load_environment().get_dataset().to_list()
    return [{**data[i % len(data)], "example_id": i} for i in range(n)]


async def ready(pool: EnvClientPool) -> None:
    """Every server up and its handshake seen: the monitor reports a handshake a moment after
    health, and until then the pool rightly sends every rollout to the one server it knows is
    connected (which the spread-over-both assertions would read as a routing fault)."""
    await pool.wait_for_server_startup()
    while not all(c.connected for c in pool.clients):
        await asyncio.sleep(0.05)


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, HANG_GUARD))


def refuses_connections(address: str) -> bool:
    host, port = address.removeprefix("tcp://").rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except ConnectionRefusedError:
        return True
    return False


class Gate:
    """A model whose replies wait until `open()` (so rollouts are in flight on demand)."""

    def __init__(self) -> None:
        self.opened = threading.Event()
        self.opened.set()

    async def __call__(self, body: dict[str, Any]) -> str:
        while not self.opened.is_set():
            await asyncio.sleep(0.02)
        return "The answer is \\boxed{" + _sum(body) + "}."


def _sum(body: dict[str, Any]) -> str:
    from verifiers.testing import ArithmeticResponder

    content = ArithmeticResponder()(body).content or ""
    return content.split("\\boxed{", 1)[1].split("}", 1)[0] if "\\boxed{" in content else "0"


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    from verifiers.ray.testing import local_cluster

    here = str(Path(__file__).parent)
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (here, saved) if p)
    try:
        node = {"num_cpus": 1, "resources": {"env_server": 1}}
        with local_cluster(workers=[node, dict(node)]) as c:
            yield c
    finally:
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved


@pytest.fixture(scope="module")
def gate() -> Gate:
    return Gate()


@pytest.fixture(scope="module")
def model(gate: Gate) -> Iterator[ScriptedServer]:
    with ScriptedServer(gate) as srv:
        yield srv


@pytest.fixture(scope="module")
def servers(cluster: Any) -> Iterator[Any]:
    """Two servers with a secret, one per node that has the `env_server` resource. The two
    variables are set after the nodes started, so only what is sent reaches a server."""
    from verifiers.ray.env_servers import start_env_servers

    os.environ[JUDGE_VAR], os.environ[UNNAMED_VAR] = JUDGE_KEY, "must-not-travel"
    try:
        started = start_env_servers(
            ENV_ID,
            {},
            num_servers=2,
            workers_per_server=1,
            num_cpus=1,
            resources={"env_server": 1},
            env_vars=(JUDGE_VAR,),
            secret=SECRET,
        )
        with started:
            yield started
    finally:
        os.environ.pop(JUDGE_VAR, None)
        os.environ.pop(UNNAMED_VAR, None)


def test_env_vars_must_be_set_where_they_are_named(cluster: Any) -> None:
    """Ours: a key the user names but does not have is a clear error before anything is
    placed (not a server whose environment fails later)."""
    from verifiers.ray.env_servers import start_env_servers

    with pytest.raises(ConfigError, match="VF_TEST_RAY_NOT_SET"):
        start_env_servers(ENV_ID, env_vars=("VF_TEST_RAY_NOT_SET",))


def test_an_environment_that_cannot_load_is_an_error_and_nothing_is_left(cluster: Any) -> None:
    """Ours: a server whose environment fails to load makes the call raise the load error
    (upstream's client would wait out its startup timeout), and the actors it placed are
    stopped: their CPUs are free again."""
    import ray

    from verifiers.ray.env_servers import start_env_servers

    cpus = ray.cluster_resources()["CPU"]
    with pytest.raises(ServerError, match="no_such_env_for_ray_env_servers"):
        start_env_servers("no_such_env_for_ray_env_servers", num_servers=1, startup_timeout=60)
    deadline = time.monotonic() + HANG_GUARD
    while ray.available_resources().get("CPU", 0) < cpus:  # the actor's release is async
        assert time.monotonic() < deadline, "the failed server's actor was not stopped"
        time.sleep(0.1)


def test_one_call_places_servers_on_both_nodes_and_unmodified_clients_reach_them(
    cluster: Any, servers: Any, model: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """issue 25 item 4: `start_env_servers(...)` returns one address per server, placed by
    Ray resources on the two nodes that have them (none on the head). prime-rl v0.5.0 builds
    `ZMQEnvClient(address=address, name=...)` for a configured address: with
    VF_ENV_SERVER_SECRET set, that unmodified client runs rollouts on each, and an
    `EnvClientPool(addresses)` spreads rollouts over both. Item 6: the named key reaches the
    environment on its servers; a variable not named does not."""
    assert sorted(servers.node_ids) == sorted(cluster.node_id(n) for n in cluster.nodes)
    assert len(set(servers.addresses)) == 2
    assert all(a.startswith("tcp://127.0.0.1:") for a in servers.addresses)
    monkeypatch.setenv(SECRET_VAR, SECRET)
    config = vf.ClientConfig(api_base_url=model.base_url)

    async def go() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        singles = []
        for address in servers.addresses:
            client = ZMQEnvClient(address=address, name=ENV_ID)
            try:
                await client.wait_for_server_startup()
                singles.append(await client.run_rollout(rows(1)[0], config, "m", {}))
            finally:
                await client.close()
        pool = EnvClientPool(servers.addresses, name=ENV_ID, **FAST_HEALTH)
        try:
            await ready(pool)
            pooled = await asyncio.gather(*(pool.run_rollout(r, config, "m", {}) for r in rows(4)))
        finally:
            await pool.close()
        return singles, list(pooled)

    singles, pooled = run(go())
    for out in singles + pooled:
        assert out["error"] is None and out["reward"] == 1.0
        assert out["metrics"]["_judge_key_len"] == len(JUDGE_KEY)
        assert out["metrics"]["_unnamed_key_len"] == 0
    pids = {o["metrics"]["_pid"] for o in singles}
    assert len(pids) == 2 and os.getpid() not in pids
    assert {o["metrics"]["_pid"] for o in pooled} == pids  # the pool used both servers


def test_a_removed_node_gives_infra_error_records_and_the_rest_goes_on(
    cluster: Any, servers: Any, model: ScriptedServer, gate: Gate
) -> None:
    """issue 25 item 5: a node leaves mid-run (`Cluster.remove_node`). The rollouts in flight
    on its server come back as infra-error records (no hang, no health-check wait: the
    connection drops), the rollouts on the other node finish, the pool sends the next rollout
    to the surviving server, and `stop()` stops what is left. Runs last: it removes a node."""
    config = vf.ClientConfig(api_base_url=model.base_url, max_retries=0)
    doomed = servers.node_ids[1]
    (node,) = [n for n in cluster.nodes if cluster.node_id(n) == doomed]

    async def go() -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
        pool = servers.client_pool(**TOLERANT_HEALTH)
        try:
            await ready(pool)
            start = model.request_count
            gate.opened.clear()
            tasks = [asyncio.create_task(pool.run_rollout(r, config, "m", {})) for r in rows(4)]
            while model.request_count < start + 4:  # every rollout is at the model
                await asyncio.sleep(0.05)
            await asyncio.to_thread(cluster.remove_node, node)
            while sum(t.done() for t in tasks) < 2:  # the dead node's two rollouts
                await asyncio.sleep(0.05)
            lost = [t.result() for t in tasks if t.done()]
            gate.opened.set()
            await asyncio.gather(*tasks)
            finished = [t.result() for t in tasks if t.result() not in lost]
            after = await pool.run_rollout(rows(1)[0], config, "m", {})
            return lost, finished, after
        finally:
            gate.opened.set()
            await pool.close()

    lost, finished, after = run(go())
    assert len(lost) == 2
    for out in lost:
        assert out["error"]["infra"] is True and out["error"]["stage"] == "server"
        assert math.isnan(out["reward"]) and out["trajectory"] == []
        assert "lost the connection" in out["error"]["message"]  # not a health-check verdict
    ok = [o for o in finished if o["error"] is None]
    assert len(ok) == 2 and {o["metrics"]["_pid"] for o in ok} == {after["metrics"]["_pid"]}
    assert after["error"] is None and after["reward"] == 1.0
    servers.stop()
    assert all(refuses_connections(a) for a in servers.addresses)
