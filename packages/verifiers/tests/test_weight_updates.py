"""In-flight weight updates through prime-rl's inference-server routes, end to end against the
scripted server: the paths, methods and payloads prime-rl's orchestrator sends
(src/prime_rl/utils/client.py at v0.2 and v0.5.0), pause holding requests until resume, and the
rollout stream's policy versions and staleness bound enforced on the versions the servers
report. Orderings are caused by gates the test opens, never by sleeps or timing thresholds."""

import asyncio

import pytest
from datasets import Dataset
from stream_kit import add, boxed_correct, single_env, stream_over, wait_until

import verifiers as vf
from verifiers.client import POLICY_VERSION_HEADER, OpenAIClient
from verifiers.errors import ConfigError, ModelConnectionError
from verifiers.testing import GateResponder, ScriptedServer, free_port
from verifiers.training import NCCL_READY_MARKER, InferenceAdmin


def ask(client: OpenAIClient, text: str = "What is 1 + 1?"):
    return client.get_response([{"role": "user", "content": text}], "m")


async def test_update_weights_sends_prime_rls_sequence_to_every_server(tmp_path):
    """prime-rl v0.5.0 utils/client.py update_weights: pause every server
    (`POST /pause?mode=keep&clear_cache=false`), `POST /update_weights {"weight_dir": ...}`
    with the trainer's `broadcasts/step_N` directory, then `POST /resume`."""
    async with (
        ScriptedServer(report_policy_version=True) as a,
        ScriptedServer(report_policy_version=True) as b,
    ):
        admin = InferenceAdmin([a.base_url, b.base_url], broadcast_dir=tmp_path / "broadcasts")
        assert admin.urls == [a.base_url.removesuffix("/v1"), b.base_url.removesuffix("/v1")]
        assert await admin.update_weights(3) == 3
        weight_dir = (tmp_path / "broadcasts" / "step_3").as_posix()
        for srv in (a, b):
            assert [path for path, _ in srv.weights.calls] == [
                "/pause",
                "/update_weights",
                "/resume",
            ]
            assert srv.weights.calls[1][1] == {"weight_dir": weight_dir, "policy_version": 3}
            assert srv.weights.version == 3 and not srv.weights.paused
        reply = await ask(OpenAIClient(b.base_url))
        assert reply.policy_version == 3 and reply.summary()["policy_version"] == 3

        # a directory named step_N means version N; any other one (or NCCL's None) one more
        assert await admin.update_weights(tmp_path / "step_7") == 7
        assert await admin.update_weights(tmp_path / "latest") == 8
        assert await admin.update_weights(None, pause=False) == 9
        assert a.weights.calls[-1] == ("/update_weights", {"weight_dir": None, "policy_version": 9})
        assert admin.policy_version == 9 and b.weights.version == 9
        with pytest.raises(ConfigError, match="go back"):
            await admin.update_weights(4)
    with pytest.raises(ConfigError, match="broadcast_dir"):
        await InferenceAdmin("http://127.0.0.1:1/v1").update_weights(1)


async def test_reload_weights_and_the_version_header(tmp_path):
    """prime-rl v0.2 utils/client.py reload_weights: `POST /reload_weights {}` resets every
    server to the base model; the scripted server then reports version 0. Without
    `report_policy_version` it sends no header, like a real vLLM server."""
    async with ScriptedServer(report_policy_version=True, policy_version=5) as srv:
        client = OpenAIClient(srv.base_url)
        assert (await ask(client)).policy_version == 5
        admin = InferenceAdmin(srv.base_url)
        await admin.reload_weights()
        assert srv.weights.calls == [("/reload_weights", {})]
        assert (await ask(client)).policy_version == 0 and admin.policy_version == 0
        # an attached stream never goes back: the next default version follows it, not the 0
        stream = vf.RolloutStream(single_env(1), srv.base_url, "m", [], policy_version=5)
        admin.attach(stream)
        assert await admin.update_weights(pause=False) == 6
        assert stream.policy_version == 6 and (await ask(client)).policy_version == 6
        srv.report_policy_version = False
        silent = await ask(client)
        assert silent.policy_version is None and "policy_version" not in silent.summary()
    assert POLICY_VERSION_HEADER == "X-Policy-Version"


async def test_init_broadcaster_gives_every_inference_gpu_its_own_rank():
    """prime-rl v0.5.0 utils/client.py init_nccl_broadcast: server i gets
    `rank_offset = i * gpus_per_server`; the payload also carries v0.2's `server_rank` and
    `num_inference_server`."""
    async with ScriptedServer() as a, ScriptedServer() as b:
        admin = InferenceAdmin([a.base_url, b.base_url])
        await admin.init_broadcaster("10.0.0.1", 29501, timeout_s=60, inference_world_size=4)
        payloads = [srv.weights.calls[0] for srv in (a, b)]
        with pytest.raises(ConfigError, match="split evenly"):
            await admin.init_broadcaster("10.0.0.1", 29501, inference_world_size=3)
    common = {
        "host": "10.0.0.1",
        "port": 29501,
        "timeout": 60,
        "inference_world_size": 4,
        "gpus_per_server": 2,
        "quantize_in_weight_transfer": False,
        "num_inference_server": 2,
    }
    assert payloads == [
        ("/init_broadcaster", {**common, "rank_offset": 0, "server_rank": 0}),
        ("/init_broadcaster", {**common, "rank_offset": 2, "server_rank": 1}),
    ]


async def test_health_and_model_checks():
    """prime-rl v0.5.0 utils/client.py check_health (`GET /health` until it answers) and
    maybe_check_has_model (`GET /v1/models` lists the model)."""
    async with ScriptedServer(model="m") as srv:
        admin = InferenceAdmin([srv.base_url])
        await admin.check_health(max_wait=5)
        await admin.check_model("m")
        with pytest.raises(ConfigError, match="not served"):
            await admin.check_model("other")
    dead = InferenceAdmin(f"http://127.0.0.1:{free_port()}/v1")
    with pytest.raises(ModelConnectionError, match="not healthy"):
        await dead.check_health(max_wait=0.05, interval=0.01)


async def test_pause_holds_requests_until_resume_and_they_get_the_new_weights(tmp_path):
    """prime-rl v0.5.0 inference/vllm/server.py /pause (mode="keep"): requests are held, not
    aborted, and are answered after /resume by the new weights."""
    async with ScriptedServer(report_policy_version=True) as srv:
        admin = InferenceAdmin(srv.base_url, broadcast_dir=tmp_path, write_nccl_ready=True)
        await admin.pause()
        held = asyncio.ensure_future(ask(OpenAIClient(srv.base_url)))
        await wait_until(lambda: srv.weights.waiting == 1)
        assert not held.done()
        await admin.update_weights(2)  # pauses (again), loads, resumes
        reply = await held
    assert reply.policy_version == 2
    assert (tmp_path / "step_2" / NCCL_READY_MARKER).exists()  # prime-rl's NCCL handshake


async def test_a_failed_update_still_resumes_every_server_and_is_raised(tmp_path):
    """prime-rl v0.5.0 utils/client.py update_weights resumes in `finally`. Ours raises every
    failure (prime-rl v0.2 logs a 404 and carries on): an unreachable server fails the update,
    and the reachable one is not left paused nor its version reported to the stream."""
    async with ScriptedServer() as srv:
        admin = InferenceAdmin(
            [srv.base_url, f"http://127.0.0.1:{free_port()}/v1"], broadcast_dir=tmp_path
        )
        with pytest.raises(ModelConnectionError):
            await admin.update_weights(1)
        assert [p for p, _ in srv.weights.calls] == ["/pause", "/resume"]
        assert not srv.weights.paused and admin.policy_version is None


async def test_a_version_bump_between_turns_is_one_call_and_tags_each_turn():
    """prime-rl v0.5.0 orchestrator/scheduler.py: a policy update mid-rollout; the rollout's
    turns carry the versions the server sampled them with (tool env, two model calls)."""
    gate = GateResponder()
    gate.hold("7")  # the second model call, answering the tool's result
    ds = Dataset.from_list([{"question": "What is 3 + 4?", "answer": "7"}])
    env = vf.ToolEnv(dataset=ds, tools=[add], max_turns=3, rubric=vf.Rubric(funcs=[boxed_correct]))
    async with ScriptedServer(gate, report_policy_version=True) as srv:
        stream = stream_over(env, srv.base_url, rollouts_per_example=1, max_off_policy_steps=1)
        admin = InferenceAdmin(srv.base_url, stream=stream)
        pending = asyncio.ensure_future(anext(stream))
        await gate.arrived["7"].wait()  # turn 1 answered under version 0, turn 2 sent
        assert await admin.update_weights() == 1  # the one call: servers and stream
        assert stream.policy_version == 1
        gate.release("7")  # turn 2 is generated by the new weights
        group = await pending
    assert group.rollouts[0]["reward"] == 1.0
    assert group.policy_versions == [[0, 1]]
    (sample,) = group.samples
    assert sample.policy_version == 0


async def test_in_flight_requests_beyond_the_bound_are_cancelled_and_rerun_on_new_weights(
    tmp_path,
):
    """prime-rl v0.5.0 orchestrator/scheduler.py _update_off_policy: after an update, requests
    more than `max_off_policy_steps` behind are cancelled and their groups re-run."""
    env = single_env(1)
    async with ScriptedServer(report_policy_version=True) as srv:
        stream = stream_over(env, srv.base_url, rollouts_per_example=2, max_off_policy_steps=0)
        admin = InferenceAdmin(srv.base_url, broadcast_dir=tmp_path, stream=stream)
        await admin.pause()
        pending = asyncio.ensure_future(anext(stream))
        await wait_until(lambda: srv.weights.waiting == 2)  # both rollouts held at the server
        await admin.update_weights(1)
        group = await pending
    assert stream.stats["stale_cancelled_groups"] == 1
    assert group.policy_versions == [[1], [1]]
    assert srv.request_count == 4  # two cancelled, two re-run


async def test_groups_sampled_by_a_server_still_on_old_weights_are_dropped():
    """Ours: the staleness bound applies to the version the server reports, so a server that
    missed an update (here: never told) is caught although the requests were sent after the
    bump; prime-rl can only count updates on the client side."""
    env = single_env(4)
    async with (
        ScriptedServer(report_policy_version=True) as fresh,
        ScriptedServer(report_policy_version=True) as stale,
    ):
        await InferenceAdmin(fresh.base_url).update_weights(version=3)
        stream = stream_over(
            env,
            [fresh.base_url, stale.base_url],
            rollouts_per_example=2,
            max_in_flight=2,
            policy_version=3,
            max_off_policy_steps=1,
        )
        groups = [g async for g in stream]
        fresh_ids = {r["id"] for r in fresh.responses}
    assert stale.request_count > 0
    assert stream.stats["stale_dropped_groups"] + stream.stats["stale_cancelled_groups"] >= 1
    assert sorted(g.example_id for g in groups) == [0, 1, 2, 3]
    assert all(g.policy_versions == [[3], [3]] for g in groups)
    for g in groups:
        for r in g.rollouts:
            assert {s["response"]["id"] for s in r["trajectory"]} <= fresh_ids
