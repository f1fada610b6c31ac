"""RolloutStream against the scripted server: completion order, policy versions and the
staleness bound, cancellation without loss or duplication, round robin over endpoints.

Requests are held at the server by a gate the test opens, so every ordering asserted here is
caused, not raced: no sleeps, no timing thresholds."""

import asyncio

import pytest
from datasets import Dataset
from stream_kit import add, boxed_correct, question, single_env, stream_over, wait_until

import verifiers as vf
from verifiers.client import OpenAIClient
from verifiers.testing import (
    ArithmeticResponder,
    Fault,
    GateResponder,
    Reply,
    ScriptedServer,
    ScriptResponder,
)
from verifiers.testing.responders import last_text


async def test_groups_come_in_completion_order_not_submission_order():
    gate = GateResponder()
    gate.hold(question(0))
    env = single_env(3)
    async with ScriptedServer(gate) as srv:
        stream = stream_over(env, srv.base_url, rollouts_per_example=2, max_in_flight=3)
        first, second = await anext(stream), await anext(stream)
        assert {first.example_id, second.example_id} == {1, 2}
        assert stream.in_flight == 1  # example 0, submitted first, is still running
        gate.release(question(0))
        third = await anext(stream)
        assert third.example_id == 0 and third.index == 0
        with pytest.raises(StopAsyncIteration):
            await anext(stream)
    assert [len(g.rollouts) for g in (first, second, third)] == [2, 2, 2]
    assert all(g.policy_versions == [[0], [0]] for g in (first, second, third))
    assert all(s.policy_version == 0 for g in (first, second, third) for s in g.samples)


async def test_every_model_call_is_tagged_with_its_policy_version():
    gate = GateResponder()
    gate.hold("What is 3 + 4?")  # the first turn; the second turn answers a tool message
    ds = Dataset.from_list([{"question": "What is 3 + 4?", "answer": "7"}])
    env = vf.ToolEnv(dataset=ds, tools=[add], max_turns=3, rubric=vf.Rubric(funcs=[boxed_correct]))
    async with ScriptedServer(gate) as srv:
        stream = stream_over(env, srv.base_url, rollouts_per_example=1)
        pending = asyncio.ensure_future(anext(stream))
        await gate.arrived["What is 3 + 4?"].wait()
        stream.set_policy_version(1)  # the first call was sent under version 0
        gate.release("What is 3 + 4?")
        group = await pending
    assert group.rollouts[0]["reward"] == 1.0
    assert group.policy_versions == [[0, 1]]
    assert group.rollouts[0]["policy_versions"] == [0, 1]
    assert (group.oldest_version, group.newest_version) == (0, 1)
    (sample,) = group.samples
    assert sample.turns == [0, 1] and sample.policy_version == 0


async def test_staleness_bound_cancels_in_flight_groups_and_reruns_them():
    gate = GateResponder()
    gate.hold(question(0))
    env = single_env(3)
    async with ScriptedServer(gate) as srv:
        stream = stream_over(
            env, srv.base_url, rollouts_per_example=2, max_in_flight=3, max_off_policy_steps=1
        )
        done = [await anext(stream), await anext(stream)]
        await gate.arrived[question(0)].wait()
        stream.set_policy_version(1)  # one step behind: still allowed
        await asyncio.sleep(0)
        assert stream.in_flight == 1 and stream.stats["stale_cancelled_groups"] == 0
        stream.set_policy_version(2)  # two steps behind: cancelled, and the example re-run
        gate.release(question(0))
        rerun = await anext(stream)
        with pytest.raises(StopAsyncIteration):
            await anext(stream)
    assert sorted(g.example_id for g in done) == [1, 2]
    assert rerun.example_id == 0 and rerun.policy_versions == [[2], [2]]
    assert stream.stats["stale_cancelled_groups"] == 1
    assert stream.stats["yielded_groups"] == 3 and stream.stats["yielded_rollouts"] == 6
    assert stream.cancelled == []
    with pytest.raises(vf.ConfigError):
        stream.set_policy_version(1)


async def test_finished_groups_beyond_the_bound_are_dropped_and_rerun():
    env = single_env(2)
    async with ScriptedServer() as srv:
        stream = stream_over(
            env, srv.base_url, rollouts_per_example=2, max_in_flight=2, max_off_policy_steps=0
        )
        first = await anext(stream)
        await wait_until(lambda: stream.buffered == 1)  # the other group finished at version 0
        stream.set_policy_version(1)
        second = await anext(stream)
        with pytest.raises(StopAsyncIteration):
            await anext(stream)
    assert first.policy_versions == [[0], [0]]
    assert second.example_id != first.example_id and second.policy_versions == [[1], [1]]
    assert stream.stats["stale_dropped_groups"] == 1
    assert stream.stats["launched_groups"] == 3


async def test_cancelling_the_consumer_loses_and_duplicates_nothing():
    gate = GateResponder()
    gate.hold(question(3))
    env = single_env(6)
    seen: list[int] = []
    async with ScriptedServer(gate) as srv:
        stream = stream_over(env, srv.base_url, rollouts_per_example=2, max_in_flight=2)

        async def consume():
            async for group in stream:
                seen.append(group.example_id)

        consumer = asyncio.ensure_future(consume())
        # everything but example 3 is consumed; the consumer now waits inside __anext__
        await wait_until(lambda: len(seen) == 5 and stream.in_flight == 1)
        consumer.cancel()
        with pytest.raises(asyncio.CancelledError):
            await consumer
        assert stream.in_flight == 1  # the held group was not cancelled with the consumer
        gate.release(question(3))
        await consume()  # a new consumer picks up where the old one stopped
        requests = srv.request_count
    assert sorted(seen) == [0, 1, 2, 3, 4, 5] and seen[-1] == 3
    assert requests == 12  # 6 groups x 2 rollouts x 1 turn: nothing ran twice
    assert stream.stats["yielded_rollouts"] == 12 and stream.cancelled == []


async def test_aclose_cancels_running_groups_and_keeps_finished_ones():
    gate = GateResponder()
    gate.hold(question(2))
    gate.hold(question(3))
    env = single_env(4)
    async with ScriptedServer(gate) as srv:
        stream = stream_over(env, srv.base_url, rollouts_per_example=2, max_in_flight=4)
        taken = [await anext(stream)]
        await wait_until(lambda: stream.buffered == 1)
        await gate.arrived[question(2)].wait()
        await gate.arrived[question(3)].wait()
        await stream.aclose()
        assert stream.in_flight == 0
        taken += [group async for group in stream]  # what had finished is still delivered
    assert sorted(g.example_id for g in taken) == [0, 1]
    assert sorted(row["example_id"] for row in stream.cancelled) == [2, 3]
    assert stream.stats["cancelled_groups"] == 2
    assert stream.stats["launched_groups"] == 4


async def test_groups_go_round_robin_over_endpoints():
    env = single_env(4)
    async with ScriptedServer() as a, ScriptedServer() as b:
        stream = stream_over(env, [a.base_url, b.base_url], rollouts_per_example=2, max_in_flight=4)
        groups = [g async for g in stream]
    assert sorted(g.index for g in groups) == [0, 1, 2, 3]
    for server, parity in ((a, 0), (b, 1)):
        asked = [last_text(body) for body in server.requests]
        expected = [question(g.example_id) for g in groups if g.index % 2 == parity]
        assert len(asked) == 4 and sorted(set(asked)) == sorted(expected)


class MixedResponder:
    """Example 0 always right, example 1 always wrong, example 2 right on every other call."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, body):
        text = last_text(body)
        if question(1) in text:
            return "The answer is \\boxed{0}."
        if question(2) in text:
            self.calls += 1
            return "The answer is \\boxed{3}." if self.calls % 2 else "No idea."
        return ArithmeticResponder()(body)


async def test_difficulty_filter_in_the_stream_skips_and_counts_zero_variance_groups():
    env = single_env(3)
    pools = vf.DifficultyFilter(env.get_dataset(), easy_threshold=1.0, hard_threshold=0.0, seed=3)
    async with ScriptedServer(MixedResponder()) as srv:
        stream = vf.RolloutStream(
            env, srv.base_url, "m", pools, rollouts_per_example=2, max_in_flight=1
        )
        groups = [await anext(stream)]
        while not {0, 1} <= pools.stats.keys():  # until both one-sided problems were drawn
            groups.append(await anext(stream))
        await stream.aclose()
    # only the mixed problem reaches the trainer; the others were observed once each, moved
    # out of the normal pool (and so never drawn again) and counted as zero-variance groups
    assert {g.example_id for g in groups} == {2}
    assert all(sorted(g.rewards) == [0.0, 1.0] for g in groups)
    assert all(sorted(g.advantages) == [-0.5, 0.5] for g in groups)
    assert pools.stats[0].groups == pools.stats[1].groups == 1
    assert (pools.pool_of(0), pools.pool_of(1), pools.pool_of(2)) == ("easy", "hard", "normal")
    assert stream.stats["zero_variance_groups"] == pools.counters["zero_variance_groups"] == 2
    assert pools.counters["filtered_easy"] == pools.counters["filtered_hard"] == 1
    assert pools.stats[2].pass_rate == 0.5


async def test_infra_failures_reach_the_trainer_masked_and_group_scoring_runs():
    calls: list[int] = []

    def group_bonus(completions, answers) -> list[float]:  # a group reward function
        calls.append(len(completions))
        return [0.0] * len(completions)

    env = single_env(1)
    env.rubric.add_reward_func(group_bonus)
    responder = ScriptResponder([(lambda body: True, "The answer is \\boxed{1}.")])
    fault = Fault(status=503, times=1)  # the first request fails; the client does not retry
    async with ScriptedServer(responder, faults=[fault]) as srv:
        client = OpenAIClient(srv.base_url, max_retries=0)
        stream = stream_over(env, client, rollouts_per_example=3)
        (group,) = [g async for g in stream]
        await client.aclose()
    assert calls == [3]  # scored as one group, by the environment's own rubric
    assert sum(group.masked) == 1 and stream.stats["masked_rollouts"] == 1
    failed = group.masked.index(True)
    assert group.rollouts[failed]["error"]["infra"] is True
    assert group.advantages == [0.0, 0.0, 0.0] and group.rewards[failed] == 0.0
    assert len(group.samples) == 2  # the failed rollout never got a reply: no tokens to train on


async def test_a_server_without_token_ids_is_an_error_for_the_consumer():
    plain = {
        "id": "chatcmpl-1",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "4"}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 1},
    }
    env = single_env(1)
    async with ScriptedServer(ScriptResponder([(lambda body: True, Reply(raw=plain))])) as srv:
        stream = stream_over(env, srv.base_url, rollouts_per_example=2, filter_zero_variance=True)
        with pytest.raises(vf.TrainingDataError, match="return_token_ids"):
            await anext(stream)
        with pytest.raises(StopAsyncIteration):
            await anext(stream)
    assert stream.stats["failed_groups"] == 1 and stream.stats["yielded_groups"] == 0


async def test_a_slow_consumer_holds_generation_back():
    env = single_env(6)
    async with ScriptedServer() as srv:
        stream = stream_over(
            env, srv.base_url, rollouts_per_example=1, max_in_flight=2, max_buffered=2
        )
        first = await anext(stream)
        await wait_until(lambda: stream.in_flight == 0)  # running groups finish into the buffer
        # the next group started while one finished group waited, none once two waited; what
        # was running then still finished into the buffer
        assert stream.stats["launched_groups"] == 4 and stream.buffered == 3
        rest = [first] + [g async for g in stream]
    assert sorted(g.example_id for g in rest) == [0, 1, 2, 3, 4, 5]
