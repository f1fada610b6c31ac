"""Faults on the Ray path (issue 25, item 5), on a real loopback cluster: an actor killed, a
node removed mid-run, a node joining mid-run, nothing placeable, the head unreachable.
Each lost group ends as records carrying a `WorkerLostError` (an infra error, so trainers
mask it) or, when configured, runs again on another actor; finished records are kept; nothing
hangs. Requests are held at the scripted server by a gate the test opens, so every fault
strikes groups known to be running."""

from __future__ import annotations

import asyncio
import os
import sys

import pytest
from command_kit import error_in_fresh_interpreter

import verifiers as vf
from verifiers.ray.environment import RayEnvironment
from verifiers.ray.testing import local_cluster
from verifiers.testing import GateResponder, ScriptedServer, free_port

NODE = {"num_cpus": 1, "resources": {"env": 2}}  # room for two environments' actors


ORCHESTRATOR_PID = os.getpid()  # travels by value with the factory below


def arithmetic() -> vf.Environment:
    return vf.load_environment("arithmetic", num_examples=6, seed=0)


def loads_only_here() -> vf.Environment:
    """Loads in this process, fails on every actor (as a package missing on the nodes)."""
    if os.getpid() != ORCHESTRATOR_PID:
        raise vf.EnvironmentLoadError("environment 'arith' is not installed on this node")
    return arithmetic()


@pytest.fixture(scope="module")
def cluster():
    with local_cluster([NODE, NODE]) as c:
        from ray import cloudpickle

        cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the factory, by value
        yield c


@pytest.fixture(scope="module")
def env(cluster):
    """One actor per node offering `env`; the tests below change the nodes in turn."""
    remote = RayEnvironment(factory=arithmetic, resources={"env": 1}, num_cpus=0,
                            max_groups_per_worker=2)  # fmt: skip
    yield remote
    asyncio.run(remote.aclose())


def live(env: RayEnvironment) -> list:
    """The actors that are up: loaded and not lost (one started on a node the cluster had not
    yet seen leave is dropped by the pool when its start fails)."""
    return [w for w in env.workers() if w.ready and not w.dead]


async def running(env: RayEnvironment) -> list[int]:
    return [(await w.handle.stats.remote())["running"] for w in live(env)]


async def until(condition) -> None:
    """Poll `condition()` (a coroutine function) until it holds; the test timeout bounds it."""
    while not await condition():
        await asyncio.sleep(0.05)


def held_gate(rows: list[dict]) -> GateResponder:
    gate = GateResponder()
    for row in rows:
        gate.hold(row["question"])
    return gate


def release(gate: GateResponder) -> None:
    for text in gate.open:
        gate.release(text)


def lost(outputs: list[dict]) -> list[dict]:
    return [o for o in outputs if (o["error"] or {}).get("error") == "WorkerLostError"]


async def test_a_killed_actor_loses_its_groups_as_masked_infra_records(env):
    """`ray.kill` on an actor holding two groups: RolloutStream gets them as fully masked
    groups (skipped, counted), the other actor's groups are yielded, and the next run has a
    replacement actor on the same node."""
    import ray

    rows = env.get_dataset().to_list()[:4]
    gate = held_gate(rows)
    await env.wait_ready(2)
    async with ScriptedServer(gate) as srv:
        stream = vf.RolloutStream(env, srv.base_url, "m", rows, rollouts_per_example=2,
                                  max_in_flight=4, filter_zero_variance=False)  # fmt: skip
        first = asyncio.ensure_future(anext(stream))
        await until(lambda: _equals(running(env), [2, 2]))
        victim = live(env)[0]
        ray.kill(victim.handle)
        release(gate)
        groups = [await first] + [g async for g in stream]
        again = await env.evaluate(srv.base_url, "m", num_examples=2)
    replaced = await env.wait_ready(2)  # the pool started a new actor on the victim's node
    assert len(groups) == 2 and not any(any(g.masked) for g in groups)
    assert stream.stats["all_masked_groups"] == 2 and stream.stats["masked_rollouts"] == 4
    assert not any(o["error"] for o in again.outputs)
    assert victim.dead and victim.node_id in {w.node_id for w in replaced}


async def _holds(value: bool) -> bool:
    return value


async def _equals(values, expected) -> bool:
    return sorted(await values) == expected


async def _dead(worker) -> bool:
    """Whether Ray reports the worker's actor dead (a call to it fails)."""
    from ray.exceptions import RayActorError

    try:
        await worker.handle.stats.remote()
    except RayActorError:
        return True
    return False


async def test_a_lost_group_is_rerun_on_another_actor_when_configured(cluster):
    """`retry_lost_groups=1`: the killed actor's group runs again elsewhere and succeeds."""
    import ray

    remote = RayEnvironment(factory=arithmetic, resources={"env": 1}, num_cpus=0,
                            retry_lost_groups=1)  # fmt: skip
    rows = remote.get_dataset().to_list()[:2]
    gate = held_gate(rows)
    try:
        await remote.wait_ready(2)
        async with ScriptedServer(gate) as srv:
            run = asyncio.ensure_future(remote.generate(rows, srv.base_url, "m"))
            await until(lambda: _equals(running(remote), [1, 1]))
            ray.kill(live(remote)[0].handle)
            release(gate)
            out = await run
    finally:
        await remote.aclose()
    assert [o["example_id"] for o in out.outputs] == [0, 1]
    assert not any(o["error"] for o in out.outputs)


async def test_a_node_removed_mid_run_keeps_finished_records_and_records_the_lost(
    cluster, env, tmp_path
):
    """`LocalCluster.remove_node` while groups run on it: the groups that finished before are
    all in the output and in results.jsonl; the node's running groups end as WorkerLostError
    records (infra); the other node's held groups finish; nothing hangs."""
    rows = [{**r, "example_id": i} for i, r in enumerate(env.get_dataset().to_list())]
    held = rows[2:]  # examples 2-5 wait at the server; 0 and 1 finish first
    gate = held_gate(held)
    finished: list[dict] = []
    await env.wait_ready(2)
    async with ScriptedServer(gate) as srv:
        run = asyncio.ensure_future(
            env.generate(rows, srv.base_url, "m", max_concurrent=-1, results_path=tmp_path,
                         on_progress=lambda _all, batch: finished.extend(batch))
        )  # fmt: skip
        await until(lambda: _equals(running(env), [2, 2]))
        # examples 0 and 1 are done on their actors; their records reach this process
        # when the orchestrator's loop takes the actors' replies (a moment later under load)
        await until(lambda: _holds(len(finished) == 2))
        assert sorted(o["example_id"] for o in finished) == [0, 1]
        doomed = live(env)[0]
        node = next(n for n in cluster.nodes if cluster.node_id(n) == doomed.node_id)
        await asyncio.to_thread(cluster.remove_node, node)
        await until(lambda: _dead(doomed))  # its groups cannot have finished since
        release(gate)
        out = await run
    gone = lost(out.outputs)
    assert len(out.outputs) == 6 and len(gone) == 2
    assert all(o["error"]["infra"] and "was lost" in o["error"]["message"] for o in gone)
    assert {0, 1} <= {o["example_id"] for o in out.outputs if not o["error"]}
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    assert len(lines) == 6
    assert doomed.dead and doomed.node_id not in {w.node_id for w in live(env)}


async def test_a_node_joining_mid_run_gets_an_actor_and_work(cluster, env):
    """One node left, its actor full (two groups held): a third group waits until a node
    joins, gets its own actor there, and runs on it."""
    rows = env.get_dataset().to_list()[:3]
    gate = held_gate(rows)
    before = {w.node_id for w in live(env)}
    assert len(before) == 1
    async with ScriptedServer(gate) as srv:
        run = asyncio.ensure_future(env.generate(rows, srv.base_url, "m"))
        await until(lambda: _equals(running(env), [2]))
        cluster.add_node(**NODE)  # in this thread: starting a node sets signal handlers
        await until(lambda: _equals(running(env), [1, 2]))
        joined = next(w for w in live(env) if w.node_id not in before)
        release(gate)
        out = await run
        done = (await joined.handle.stats.remote())["finished"]
    assert not any(o["error"] for o in out.outputs) and done == 1


async def test_when_no_actor_can_be_placed_the_groups_end_as_lost_records(cluster):
    """No node offers the resource: after the bounded wait every group is a WorkerLostError
    record saying what could not be placed (no hang)."""
    remote = RayEnvironment(factory=arithmetic, resources={"gpu_sandbox": 1}, num_cpus=0,
                            placement_timeout=0.5)  # fmt: skip
    try:
        out = await remote.generate(remote.get_dataset().to_list()[:2], "http://127.0.0.1:9", "m")
    finally:
        await remote.aclose()
    assert len(lost(out.outputs)) == 2
    assert "no alive node had" in out.outputs[0]["error"]["message"]
    assert "gpu_sandbox" in out.outputs[0]["error"]["message"]


async def test_an_environment_that_fails_to_load_on_the_actors_is_a_clear_lost_record(cluster):
    """The actors cannot load the environment: the groups end at once (not after the
    placement timeout) as WorkerLostError records carrying the loading error."""
    remote = RayEnvironment(factory=loads_only_here, num_cpus=0, placement_timeout=600)
    try:
        out = await remote.generate(remote.get_dataset().to_list()[:2], "http://127.0.0.1:9", "m")
    finally:
        await remote.aclose()
    assert len(lost(out.outputs)) == 2
    message = out.outputs[0]["error"]["message"]
    assert "no environment worker could load the environment" in message
    assert "\x1b" not in message and "not installed on this node" in message


def test_an_unreachable_head_fails_at_construction_and_verifiers_does_not_import_ray():
    port = free_port()  # nothing listens on it
    message = error_in_fresh_interpreter(
        "import sys, verifiers.training, verifiers.generation\n"
        "assert 'ray' not in sys.modules\n"
        "from verifiers.ray.environment import RayEnvironment\n"
        f"RayEnvironment('arithmetic', address='127.0.0.1:{port}')",
        "ClusterUnreachableError",
    )
    assert f"127.0.0.1:{port}" in message
