"""The Ray sandbox tier (issue 25, item 3, with its share of items 5-7) on a real 2-node
cluster on loopback: sandboxes spread over the nodes by free capacity, calls go to the host
actor that holds them, image specs run on the hosts' image tier, only what a request carries
reaches a sandbox, SandboxEnv / CodeEnv /
i3-code use the tier by configuration alone, and a host that dies, stops answering or loses
its node turns its sandboxes into `SandboxDeadError` (never a hang) while creation moves to
the hosts left and to nodes that join."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import signal
import tempfile
import time
from pathlib import Path

import pytest
from datasets import Dataset

import verifiers as vf
from verifiers.envs.code_env import CodeEnv
from verifiers.envs.sandbox_env import SandboxEnv
from verifiers.ray.testing import local_cluster
from verifiers.sandbox import (
    RayProvider,
    SandboxCreationError,
    SandboxDeadError,
    SandboxSpec,
    cgroups,
    tier_of,
)
from verifiers.sandbox.base import MiB
from verifiers.sandbox.localregistry import Layer, LocalRegistry, host_programs
from verifiers.testing import Reply, ScriptedServer, evaluate_against_script
from verifiers.testing.responders import last_message, last_text

SPEC_ARGS = {"memory": 128 * MiB, "pids": 64, "disk": 16 * MiB}
SPEC = SandboxSpec(**SPEC_ARGS)
#: planted in the environment the nodes start with (so the host actors hold it)
NODE_SECRET = (f"NODE_SECRET_{secrets.token_hex(4).upper()}", secrets.token_hex(16))


@pytest.fixture(scope="module")
def cluster():
    """A head without the `sandbox` resource and two nodes with it. The nodes start with a
    secret in their environment and a sandbox cache of their own (pulled images go there)."""
    name, value = NODE_SECRET
    cache = Path(tempfile.mkdtemp(prefix="vf-ray-cache-"))
    cache.chmod(0o755)  # the sandbox uid reaches the image stage below it
    os.environ[name], os.environ["VF_SANDBOX_CACHE"] = value, str(cache)
    try:
        with local_cluster(
            [{"num_cpus": 1, "resources": {"sandbox": 1}}, {"num_cpus": 1, "resources": {"sandbox": 1}}]
        ) as c:  # fmt: skip
            yield c
    finally:
        os.environ.pop(name, None)
        os.environ.pop("VF_SANDBOX_CACHE", None)
        shutil.rmtree(cache, ignore_errors=True)


def sandbox_nodes(cluster) -> set[str]:
    return {cluster.node_id(n) for n in cluster.nodes}


async def provider_for(cluster, **options) -> RayProvider:
    options = {"node_resource": "sandbox", "warm_per_node": 0, **options}
    return RayProvider(cluster.address, **options)


def host_cgroups(pid: int) -> list[Path]:
    return [g for g in cgroups.existing() if f"-{pid}-" in g.name]


async def test_no_node_with_the_resource_is_a_clear_creation_error(cluster):
    """Creation with no host at all fails at once, naming what is missing."""
    provider = await provider_for(cluster, node_resource="gpu-sandbox")
    with pytest.raises(SandboxCreationError, match="no node with the resource 'gpu-sandbox'"):
        await provider.create(SPEC)
    await provider.close()


async def test_sandboxes_spread_over_the_nodes_by_free_capacity(cluster):
    """Placement takes the host with the most free slots; each host runs on its own node (as
    Ray's runtime context tells the host); a full tier is a clear error; a freed slot is
    where the next sandbox goes."""
    provider = await provider_for(cluster, sandboxes_per_node=3)
    assert tier_of(provider).name == "ray"
    try:
        boxes = [await provider.create(SPEC) for _ in range(4)]
        per_node = {n: sum(b.node_id == n for b in boxes) for n in sandbox_nodes(cluster)}
        assert sorted(per_node.values()) == [2, 2], per_node  # never 3 + 1
        stats = await provider.host_stats()
        assert set(stats) == sandbox_nodes(cluster)  # one host per node with the resource
        for node, s in stats.items():
            assert s["node_id"] == node and s["live"] == per_node[node] and s["slots"] == 3
        assert len({s["pid"] for s in stats.values()}) == 2
        boxes += [await provider.create(SPEC) for _ in range(2)]
        with pytest.raises(SandboxCreationError, match="every sandbox host is full"):
            await provider.create(SPEC)
        freed = boxes.pop(0)
        await freed.close()
        again = await provider.create(SPEC)
        assert again.node_id == freed.node_id
        boxes.append(again)
        r = await asyncio.gather(*(b.exec(f"echo {i}") for i, b in enumerate(boxes)))
        assert [x.stdout for x in r] == [f"{i}\n" for i in range(6)]
    finally:
        await provider.close()


async def test_calls_go_to_the_host_and_only_the_request_reaches_the_sandbox(cluster, monkeypatch):
    """exec / files / dirs / REPL through the host; the sandbox sees the spec's and the
    command's env= only: neither the orchestrator's environment nor the host actor's (which
    holds the node's) leaks in. Closing the provider stops its hosts and leaves no sandbox
    process or cgroup on the node."""
    name, value = f"DRIVER_SECRET_{secrets.token_hex(4).upper()}", secrets.token_hex(16)
    monkeypatch.setenv(name, value)
    provider = await provider_for(cluster, warm_per_node=1)
    spec = SandboxSpec(memory=128 * MiB, pids=64, disk=16 * MiB, env={"FROM_SPEC": "s"})
    box = await provider.create(spec)
    host_pid = (await provider.host_stats())[box.node_id]["pid"]
    host_env = Path(f"/proc/{host_pid}/environ").read_bytes()  # noqa: ASYNC240
    assert f"{NODE_SECRET[0]}={NODE_SECRET[1]}".encode() in host_env  # the host holds it
    try:
        r = await box.exec(["env"], env={"FROM_CALL": "c"})
        got = dict(line.split("=", 1) for line in r.stdout.splitlines())
        assert got["FROM_SPEC"] == "s" and got["FROM_CALL"] == "c"
        seen = (
            await box.exec("cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline | tr '\\0' ' '")
        ).stdout
        for secret in (*NODE_SECRET, name, value):
            assert secret not in r.stdout and secret not in seen
        await box.write_file("a/b.txt", b"\x00bytes")
        assert await box.read_file("a/b.txt") == b"\x00bytes"
        await box.write_dir("pkg", {"m.py": "X = 41", "sub/n.txt": "n"})
        assert await box.read_dir("pkg") == {"m.py": b"X = 41", "sub/n.txt": b"n"}
        r = await box.exec("python3 -c 'import m; print(m.X + 1)'", cwd="pkg", stdin="ignored")
        assert r.stdout == "42\n"
        assert (await box.exec("sleep 5", timeout=0.5)).timed_out
        await box.python("x = 20")
        assert (await box.python("x * 2 + 2"))["result"] == "42"
        with pytest.raises(OSError, match="missing"):  # the agent's error, as raised there
            await box.read_file("missing")
        assert host_cgroups(host_pid)  # (what the end of this test checks is gone)
    finally:
        await box.close()
        with pytest.raises(SandboxDeadError):
            await box.exec("true")
        await provider.close()
    deadline = time.monotonic() + 60
    gone = Path(f"/proc/{host_pid}")
    while time.monotonic() < deadline and gone.exists():  # noqa: ASYNC240
        await asyncio.sleep(0.1)
    assert not gone.exists(), "the host actor is still running"  # noqa: ASYNC240
    assert host_cgroups(host_pid) == []


async def test_image_specs_run_on_the_hosts_image_tier(cluster):
    """A spec naming an image runs on the host's image tier (pulled there from a registry
    on loopback); a plain spec on the same provider runs on bwrap-zygote, without it."""
    provider = await provider_for(cluster)
    app = Layer().dir("testbed").file("testbed/hello.txt", "from the image\n")
    try:
        with LocalRegistry() as registry:
            registry.add_image("vf/app", "v1", [host_programs(["bash", "cat"]), app])
            spec = SandboxSpec(image=f"{registry.host}/vf/app:v1", workdir="/testbed", **SPEC_ARGS)
            async with await provider.create(spec) as box:
                r = await box.exec("cat hello.txt")
                assert (r.exit_code, r.stdout) == (0, "from the image\n"), r
        async with await provider.create(SPEC) as plain:
            assert (await plain.exec("test -e /testbed/hello.txt")).exit_code != 0
            assert (await plain.exec("echo plain")).stdout == "plain\n"
    finally:
        await provider.close()


def bash_then_done(command: str):
    async def respond(body):
        if last_message(body)["role"] == "tool":
            return "done"
        return Reply(tool_calls=[{"name": "bash", "arguments": {"command": command}}])

    return respond


def assert_rewards(out, expected: list[float]) -> None:
    """The evaluation's rewards in example order; the rollouts' errors say why when not."""
    outputs = out["outputs"]
    assert [o["reward"] for o in outputs] == expected, [o.get("error") for o in outputs]


async def on_a_sandbox_node(state) -> float:
    box = state["sandbox"]
    ok = isinstance(box.node_id, str) and (await box.read_file("out.txt")) == b"ray\n"
    return float(ok)


async def test_sandbox_env_and_code_env_use_the_tier_by_configuration(cluster, monkeypatch):
    """VF_SANDBOX_PROVIDER=ray makes SandboxEnv's rollouts run on the cluster's hosts (the
    reward reads the file the model's command wrote there); CodeEnv takes provider="ray"."""
    monkeypatch.setenv("VF_SANDBOX_PROVIDER", "ray")
    monkeypatch.setenv("VF_SANDBOX_NODE_RESOURCE", "sandbox")
    env = SandboxEnv(
        dataset=Dataset.from_list([{"question": "q", "answer": ""}] * 2),
        rubric=vf.Rubric(funcs=[on_a_sandbox_node]),
        docker_image=None,  # (an image would run on the hosts' image tier)
        spec=SPEC,
        pool_size=1,
    )
    assert isinstance(env.provider, RayProvider) and env.provider.node_resource == "sandbox"
    with ScriptedServer(bash_then_done("echo ray > out.txt")) as srv:
        client = vf.OpenAIClient(srv.base_url, api_key="x")
        try:
            out = await env.evaluate(client, "m", num_examples=2)
        finally:
            await client.aclose()
    assert_rewards(out, [1.0, 1.0])
    assert set(await env.provider.host_stats()) == sandbox_nodes(cluster)
    await env.teardown()
    assert env.provider.hosts() == {}  # owned: its hosts stopped with the env

    monkeypatch.delenv("VF_SANDBOX_PROVIDER")
    rows = [
        {"question": "sum", "answer": "", "info": {"tests": json.dumps([{"input": "1 2", "output": "3"}])}},
        {"question": "zero", "answer": "", "info": {"tests": json.dumps([{"input": "1 2", "output": "3"}])}},
    ]  # fmt: skip
    programs = {
        "sum": "```python\nprint(sum(map(int, input().split())))\n```",
        "zero": "```python\nprint(0)\n```",
    }
    code = CodeEnv(dataset=Dataset.from_list(rows), provider="ray", spec=SPEC, pool_size=1)
    assert isinstance(code._provider, RayProvider)
    out = await evaluate_against_script(
        code, lambda body: programs[last_text(body)], num_examples=2
    )
    assert_rewards(out, [1.0, 0.0])


async def test_i3_code_and_mini_swe_agent_plus_use_the_tier_by_configuration(cluster, monkeypatch):
    """i3-code graded on the Ray tier with no argument naming it (a right and a wrong
    solution of its bundled sample); mini-swe-agent-plus loads with the same provider."""
    import i3_code
    import mini_swe_agent_plus

    monkeypatch.setenv("VF_SANDBOX_PROVIDER", "ray")
    monkeypatch.setenv("VF_SANDBOX_NODE_RESOURCE", "sandbox")
    rows = [json.loads(line) for line in i3_code.SAMPLE.read_text().splitlines()][:2]
    solutions = [json.loads(r["info"])["solutions"] for r in rows]
    answers = {
        rows[0]["question"]: f"```python\n{solutions[0]['correct']}```",
        rows[1]["question"]: f"```python\n{solutions[1]['wrong']}```",
    }
    env = i3_code.load_environment(source="sample", num_examples=2, pool_size=1)
    assert isinstance(env._provider, RayProvider)
    out = await evaluate_against_script(
        env, lambda body: answers.get(last_text(body).split("\n\n", 1)[1], "?"), num_examples=2
    )
    assert_rewards(out, [1.0, 0.0])
    swe = mini_swe_agent_plus.load_environment(pool_size=0)
    assert isinstance(swe.provider, RayProvider)
    await swe.teardown()


async def test_a_host_that_stops_answering_fails_its_calls_at_the_deadline(cluster):
    """A frozen host (SIGSTOP: a hung node) is a SandboxDeadError once the call's timeout
    plus the margin has passed, not a hang."""
    provider = await provider_for(cluster, call_margin=2.0)
    box = await provider.create(SPEC)
    pid = (await provider.host_stats())[box.node_id]["pid"]
    os.kill(pid, signal.SIGSTOP)
    try:
        with pytest.raises(SandboxDeadError, match="did not answer within"):
            await box.exec("true", timeout=1)
        assert not box.alive
    finally:
        os.kill(pid, signal.SIGCONT)
        await provider.close()


async def test_a_killed_host_turns_its_sandboxes_dead_and_creation_moves(cluster):
    """ray.kill on a host: the call in flight and the next call on its sandboxes raise
    SandboxDeadError; new sandboxes go to the other node's host, until the dead host is
    replaced (`host_restart_delay`) on its node, which is still alive."""
    import ray

    provider = await provider_for(cluster, host_restart_delay=None)
    try:
        first, second = await provider.create(SPEC), await provider.create(SPEC)
        assert first.node_id != second.node_id
        running = asyncio.ensure_future(first.exec("sleep 60", timeout=90))
        await asyncio.sleep(0.5)
        ray.kill(first.host.actor, no_restart=True)
        with pytest.raises(SandboxDeadError, match="died"):
            await running
        with pytest.raises(SandboxDeadError):
            await first.exec("true")
        later = [await provider.create(SPEC) for _ in range(3)]
        assert {b.node_id for b in later} == {second.node_id}
        assert (await second.exec("echo alive")).stdout == "alive\n"
        old_pid = provider.hosts()[first.node_id]["pid"]
        provider.host_restart_delay, provider.refresh_interval = 0.0, 0.0
        replaced = await provider.create(SPEC)  # the new host has the most free slots
        assert replaced.node_id == first.node_id
        assert provider.hosts()[first.node_id]["pid"] not in (None, old_pid)
        assert (await replaced.exec("echo back")).stdout == "back\n"
    finally:
        await provider.close()


async def test_a_removed_node_fails_its_sandboxes_and_a_joining_node_gets_a_host(cluster):
    """Node removal mid-exec: SandboxDeadError, creation on the surviving node; a node that
    joins (with the resource) gets a host and, having the most free slots, the next
    sandboxes. (Last in this module: it changes the cluster.)"""
    provider = await provider_for(cluster, refresh_interval=0.0)
    try:
        boxes = [await provider.create(SPEC) for _ in range(2)]
        doomed = next(n for n in cluster.nodes if cluster.node_id(n) == boxes[0].node_id)
        running = asyncio.ensure_future(boxes[0].exec("sleep 60", timeout=90))
        await asyncio.sleep(0.5)
        cluster.remove_node(doomed)
        with pytest.raises(SandboxDeadError):
            await running
        with pytest.raises(SandboxDeadError):
            await boxes[0].read_file("x")
        survivor = boxes[1].node_id
        assert {(await provider.create(SPEC)).node_id for _ in range(2)} == {survivor}
        joined = cluster.add_node(num_cpus=1, resources={"sandbox": 1})
        new = await provider.create(SPEC)
        assert new.node_id == cluster.node_id(joined)  # 0 of 64 slots used there
        assert (await new.exec("echo joined")).stdout == "joined\n"
    finally:
        await provider.close()
