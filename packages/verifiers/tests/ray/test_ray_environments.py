"""Environments on a Ray cluster (issue 25, item 2): `RayEnvironment` runs rollout groups on
worker actors of a real 3-node cluster on loopback, and its records equal the in-process ones;
clients travel with the groups, secrets reach only the actors they were named for (item 6),
an EnvGroup's and a Mixture's members run on actors placed apart, and `RolloutStream` keeps
its version tags, staleness bound (cancelling the remote group) and difficulty pools.

Requests are held at the scripted server by a gate the test opens, so orderings are caused,
not raced. One cluster and one shared two-actor environment serve the whole module."""

from __future__ import annotations

import asyncio
import json
import sys
import threading

import pytest

import verifiers as vf
from verifiers.ray.environment import RayEnvironment
from verifiers.ray.testing import local_cluster
from verifiers.testing import Fault, GateResponder, ScriptedServer
from verifiers.training import TOKEN_SAMPLING_ARGS

SECRET_VAR = "VF_RAY_TEST_JUDGE_KEY"


def arithmetic(seed: int = 0, num_examples: int = 4) -> vf.Environment:
    return vf.load_environment("arithmetic", num_examples=num_examples, seed=seed)


def sees_secret(**_) -> float:
    """A metric (weight 0): whether the process that scored the rollout sees the secret."""
    import os

    return 1.0 if os.environ.get(SECRET_VAR) == "s3cret" else 0.0


def probed_arithmetic() -> vf.Environment:
    env = arithmetic(num_examples=6)
    env.rubric.add_reward_func(sees_secret, weight=0.0)
    return env


def nested_group() -> vf.Environment:
    """An EnvGroup whose second member is a Mixture: both kinds of group in one run."""
    mix = vf.Mixture([arithmetic(2, 2), arithmetic(3, 2)], env_names=["x", "y"], seed=3)
    return vf.EnvGroup([arithmetic(1, 3), mix], env_names=["a", "mix"])


@pytest.fixture(scope="module")
def cluster():
    # ray is imported only now: local_cluster sets its loopback switch before the import
    with local_cluster(
        [
            {"num_cpus": 2, "resources": {"env": 2}, "labels": {"zone": "a"}},
            {"num_cpus": 2, "resources": {"env": 2}, "labels": {"zone": "b"}},
        ]
    ) as c:
        from ray import cloudpickle

        # the factories here are not importable on the actors: they travel by value
        cloudpickle.register_pickle_by_value(sys.modules[__name__])
        yield c


@pytest.fixture(scope="module")
def shared(cluster):
    """One actor on each worker node (they offer `env`), two groups at a time each."""
    env = RayEnvironment(
        factory=probed_arithmetic, resources={"env": 1}, num_cpus=0, max_groups_per_worker=2
    )
    yield env
    asyncio.run(env.aclose())


async def stats_of(env: RayEnvironment) -> list[dict]:
    return [await w.handle.stats.remote() for w in env.workers() if not w.dead]


def comparable(outputs: list[dict]) -> list[str]:
    """Records as JSON, timing aside (and the server's response ids, new for every call)."""
    rows = []
    for out in outputs:
        out = {k: v for k, v in out.items() if k != "timing"}
        out["trajectory"] = [
            {**s, "response": {k: v for k, v in s["response"].items() if k != "id"}}
            for s in out.get("trajectory") or ()
        ]
        rows.append(json.dumps(out, sort_keys=True, default=str))
    return rows


def node_of(cluster, zone: str) -> str:
    import ray

    return next(n["NodeID"] for n in ray.nodes() if n["Labels"].get("zone") == zone)


async def test_records_equal_the_in_process_records(cluster, shared, tmp_path):
    """Item 2: same environment, same scripted model, once in process and once on the
    cluster: the same records (token ids, logprobs, errors, advantages), timing aside; the
    groups spread over both nodes' actors, never more than max_groups_per_worker at once."""
    fail = Fault(status=400, times=None, match="What is 9", message="bad request")
    servers = [ScriptedServer(faults=[fail]).start(), ScriptedServer(faults=[fail]).start()]
    urls = [s.base_url for s in servers]  # two endpoints: each group's own client travels
    try:
        await shared.wait_ready(2)  # so that both actors are there to share the groups
        before = await stats_of(shared)
        args = dict(num_examples=6, rollouts_per_example=3, sampling_args=TOKEN_SAMPLING_ARGS)
        expected = await probed_arithmetic().evaluate(urls, "m", **args)
        got = await shared.evaluate(urls, "m", results_path=tmp_path / "run", **args)
        after = await stats_of(shared)
    finally:
        for s in servers:
            s.stop()
    assert comparable(got.outputs) == comparable(expected.outputs)
    assert any(o["error"] for o in got.outputs), "the script's failing example is covered"
    assert all(o["trajectory"][0]["tokens"] for o in got.outputs if not o["error"])
    written = (tmp_path / "run" / "results.jsonl").read_text().splitlines()
    assert len(written) == 18
    assert {w.node_id for w in shared.workers()} == {node_of(cluster, "a"), node_of(cluster, "b")}
    ran = [a["finished"] - b["finished"] for a, b in zip(after, before, strict=True)]
    assert sum(ran) == 6 and all(n > 0 for n in ran)
    assert all(s["peak_running"] <= 2 for s in after)


async def test_an_unpicklable_client_is_a_config_error_naming_what_to_pass(shared):
    class LockedClient(vf.Client):
        def __init__(self) -> None:
            self.lock = threading.Lock()

    with pytest.raises(vf.ConfigError, match="LockedClient.*vf.ClientConfig"):
        await shared.evaluate(LockedClient(), "m", num_examples=1)


async def test_secrets_reach_only_the_actors_they_were_named_for(shared, monkeypatch):
    """Item 6: the user names the variables an environment needs; their values, read here,
    reach that environment's actors, and no other actor sees them (the nodes were started
    before this process had the variable)."""
    monkeypatch.setenv(SECRET_VAR, "s3cret")
    with ScriptedServer() as srv:
        named = RayEnvironment(
            factory=probed_arithmetic, env_vars=[SECRET_VAR], labels={"zone": "a"}, num_cpus=0
        )
        try:
            with_key = await named.evaluate(srv.base_url, "m", num_examples=2)
        finally:
            await named.aclose()
        # the sync form: its own event loop (in a thread here), and the same actors
        without = shared.evaluate_sync(srv.base_url, "m", num_examples=2)
    assert [o["sees_secret"] for o in with_key.outputs] == [1.0, 1.0]
    assert [o["sees_secret"] for o in without.outputs] == [0.0, 0.0]
    monkeypatch.delenv(SECRET_VAR)
    with pytest.raises(vf.MissingKeyError, match=SECRET_VAR):
        RayEnvironment(factory=probed_arithmetic, env_vars=[SECRET_VAR])


async def test_group_members_run_on_their_own_actors(cluster):
    """Item 2: an EnvGroup's members (one of them a Mixture) placed on different nodes; rows
    are routed here by the group's own routing, and the records equal the in-process group's."""
    with ScriptedServer() as srv:
        remote = RayEnvironment(
            factory=nested_group,
            num_cpus=0,
            members={"a": {"labels": {"zone": "a"}}, "mix": {"labels": {"zone": "b"}}},
        )
        try:
            expected = await nested_group().evaluate(srv.base_url, "m", rollouts_per_example=2)
            got = await remote.evaluate(srv.base_url, "m", rollouts_per_example=2)
            finished = {
                name: [(await w.handle.stats.remote())["finished"] for w in pool.workers]
                for name, pool in remote.pools.items()
            }
        finally:
            await remote.aclose()
    assert comparable(got.outputs) == comparable(expected.outputs)
    routes = [o["info"]["env_id"] for o in got.outputs]
    assert routes.count("a") == 6 and routes.count(["mix", "x"]) + routes.count(["mix", "y"]) == 8
    for name, zone in (("a", "a"), ("mix", "b")):
        assert [w.node_id for w in remote.pools[name].workers] == [node_of(cluster, zone)]
    assert finished == {"a": [3], "mix": [4]}  # each ran only its own member's groups
    assert remote._default is None  # every member placed: no catch-all actors started


async def test_stream_tags_launch_versions_and_cancels_stale_groups_on_the_actor(shared):
    """Item 2, RolloutStream on the cluster: a call's version is the group's launch version
    (the server reports none); a group gone stale is cancelled on its actor (`ray.cancel`)
    and its example re-run; nothing is lost or duplicated."""
    rows = shared.get_dataset().to_list()[:3]
    gate = GateResponder()
    gate.hold(rows[0]["question"])
    await shared.wait_ready(2)
    before = sum(s["cancelled"] for s in await stats_of(shared))
    async with ScriptedServer(gate) as srv:
        stream = vf.RolloutStream(
            shared, srv.base_url, "m", rows, rollouts_per_example=2, max_in_flight=3,
            max_off_policy_steps=1, filter_zero_variance=False,
        )  # fmt: skip
        done = [await anext(stream), await anext(stream)]
        await gate.arrived[rows[0]["question"]].wait()  # its group runs on an actor
        stream.set_policy_version(2)  # two steps behind: cancelled, and the example re-run
        while sum(s["cancelled"] for s in await stats_of(shared)) == before:
            await asyncio.sleep(0.05)  # the test's timeout bounds a cancel that never lands
        gate.release(rows[0]["question"])
        rerun = await anext(stream)
        with pytest.raises(StopAsyncIteration):
            await anext(stream)
    assert sorted(g.example_id for g in done) == [1, 2]
    assert all(g.policy_versions == [[0], [0]] for g in done)
    assert rerun.example_id == 0 and rerun.policy_versions == [[2], [2]]
    assert stream.stats["stale_cancelled_groups"] == 1 and stream.stats["yielded_groups"] == 3
    assert stream.cancelled == []
    assert all(s["running"] == 0 for s in await stats_of(shared))


async def test_stream_takes_reported_versions_and_feeds_difficulty_pools(shared):
    """A server that reports its weights' version tags the calls with it (not the launch
    version); a DifficultyFilter as the stream's examples learns from the remote groups."""
    rows = shared.get_dataset().to_list()
    pools = vf.DifficultyFilter(rows, seed=1)
    async with ScriptedServer(report_policy_version=True, policy_version=3) as srv:
        stream = vf.RolloutStream(
            shared, srv.base_url, "m", pools, rollouts_per_example=2, max_in_flight=2,
            policy_version=4, max_off_policy_steps=None, filter_zero_variance=False,
        )  # fmt: skip
        groups = [await anext(stream) for _ in range(3)]
        await stream.aclose()
    assert all(g.policy_versions == [[3], [3]] for g in groups)
    assert pools.counters["groups"] >= 3 and pools.counters["moved_to_easy"] >= 1


def test_clients_travel_without_their_connections_and_share_one_pool_there():
    """What an actor receives with each group: the endpoint, key and headers (never pooled
    sessions or an SDK client, never a remembered token-in turn), the time left on an
    endpoint marked down, and an identity that makes every copy one instance there."""
    import pickle

    import openai

    from verifiers.training import TokenInClient

    sdk = openai.AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key="k1")
    plain = vf.OpenAIClient(sdk, headers={"X-Team": "rl"})
    plain.chat  # noqa: B018 - builds the SDK client this copy must not carry
    token_in = TokenInClient("http://127.0.0.1:8/v1", api_key="k2")
    token_in._turns[1] = object()
    multi = vf.MultiEndpointClient([plain, token_in], down_seconds=300)
    multi.mark_down(1, ConnectionRefusedError("refused"), warn=False)
    known: dict = {}
    copies = [pickle.loads(pickle.dumps(multi.for_group(i))).rebind(known) for i in range(3)]
    parent = copies[0]._parent
    assert all(c._parent is parent for c in copies) and list(known) == [multi.wire_id]
    copy_plain, copy_token_in = parent.clients
    assert (
        copy_plain._headers == plain._headers
        and "Bearer k1" in copy_plain._headers["Authorization"]
    )
    assert copy_plain.__dict__["_openai_client"] is None and copy_plain._sessions == {}
    assert len(copy_token_in._turns) == 0 and copy_token_in._headers["Authorization"] == (
        "Bearer k2"
    )
    assert parent.live() == [0]  # still marked down there, for the time it had left


async def test_max_concurrent_takes_a_groups_share_of_slots_at_once():
    """`max_concurrent` across the cluster: a group sent to an actor holds min(group, limit)
    slots until it returns; one taker at a time, so two half-served groups never deadlock."""
    from verifiers.generation import RolloutSlots

    slots = RolloutSlots(3)
    assert await slots.take(2) == 2
    waiting = asyncio.ensure_future(slots.take(5))  # wants all 3: waits for the first group
    await asyncio.sleep(0)
    assert not waiting.done()
    slots.give_back(2)
    assert await waiting == 3 and slots.locked()
    slots.give_back(3)
    assert not slots.locked()
