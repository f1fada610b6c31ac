"""Training samples from real rollouts against the scripted server's token ids and logprobs."""

import math

import pytest
from datasets import Dataset

import verifiers as vf
from verifiers.client import OpenAIClient
from verifiers.testing import Fault, Reply, ScriptedServer, ScriptResponder, decode
from verifiers.training import TOKEN_SAMPLING_ARGS, build_group, build_samples, group_advantages


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def boxed_correct(completion, answer) -> float:
    return float(f"\\boxed{{{answer}}}" in (completion[-1].get("content") or ""))


def tool_env(questions: list[tuple[int, int]], max_turns: int = 5) -> vf.ToolEnv:
    ds = Dataset.from_list(
        [{"question": f"What is {a} + {b}?", "answer": str(a + b)} for a, b in questions]
    )
    return vf.ToolEnv(
        dataset=ds, tools=[add], max_turns=max_turns, rubric=vf.Rubric(funcs=[boxed_correct])
    )


def responses_for(srv: ScriptedServer, text: str) -> list[dict]:
    """The server's own response bodies for requests whose prompt mentions `text`, in order."""
    return [r for r in srv.responses if text in decode(r["prompt_token_ids"], skip_special=False)]


THREE_TURNS = ScriptResponder(
    [
        (
            lambda body: True,
            [
                Reply(
                    reasoning_content="first add",
                    tool_calls=[{"name": "add", "arguments": {"a": 1, "b": 2}}],
                ),
                Reply(
                    reasoning_content="then add",
                    tool_calls=[{"name": "add", "arguments": {"a": 3, "b": 4}}],
                ),
                Reply(reasoning_content="done", content="The answer is \\boxed{7}."),
            ],
        )
    ]
)


async def test_multi_turn_tool_rollout_is_one_token_exact_sample():
    env = tool_env([(3, 4)])
    async with ScriptedServer(THREE_TURNS) as srv:
        res = await env.generate(
            env.eval_inputs(1, 1), srv.base_url, "m", sampling_args=TOKEN_SAMPLING_ARGS
        )
    (out,) = res["outputs"]
    assert out["error"] is None and out["reward"] == 1.0 and len(out["trajectory"]) == 3
    (sample,) = build_samples(out)
    turns = responses_for(srv, "What is 3 + 4?")
    assert len(turns) == 3
    last = turns[-1]
    server_ids = last["prompt_token_ids"] + last["choices"][0]["token_ids"]
    assert sample.prompt_ids + sample.completion_ids == server_ids
    assert sample.prompt_ids == turns[0]["prompt_token_ids"]
    assert sample.turns == [0, 1, 2]

    # mask 1 exactly on what the server generated, with its logprobs; 0 (and logprob 0) between
    expected_mask = [0] * len(sample.completion_ids)
    expected_lp = [0.0] * len(sample.completion_ids)
    for turn in turns:
        start = len(turn["prompt_token_ids"]) - len(sample.prompt_ids)
        ids = turn["choices"][0]["token_ids"]
        assert sample.completion_ids[start : start + len(ids)] == ids
        expected_mask[start : start + len(ids)] = [1] * len(ids)
        expected_lp[start : start + len(ids)] = [
            t["logprob"] for t in turn["choices"][0]["logprobs"]["content"]
        ]
    assert sample.completion_mask == expected_mask
    assert sample.completion_logprobs == expected_lp
    env_tokens = [
        t for t, m in zip(sample.completion_ids, sample.completion_mask, strict=True) if m == 0
    ]
    assert decode(env_tokens, skip_special=False) == (
        "\n<|tool|>\n3<|end|>\n<|assistant|>\n" + "\n<|tool|>\n7<|end|>\n<|assistant|>\n"
    )


class FollowUpEnv(vf.MultiTurnEnv):
    """One user follow-up after the first answer."""

    async def env_response(self, messages, state, **kwargs):
        return [
            {"role": "user", "content": "Are you sure? Check every step of it once more, please."}
        ]


@pytest.mark.parametrize("drop_past_reasoning", [False, True])
async def test_non_extending_turn_starts_a_new_sample(drop_past_reasoning):
    ds = Dataset.from_list([{"question": "What is 2 + 2?", "answer": "4"}])
    env = FollowUpEnv(dataset=ds, max_turns=2, rubric=vf.Rubric(funcs=[boxed_correct]))
    responder = ScriptResponder(
        [(lambda body: True, Reply(reasoning_content="hm", content="\\boxed{4}"))]
    )
    async with ScriptedServer(responder, drop_past_reasoning=drop_past_reasoning) as srv:
        res = await env.generate(
            env.eval_inputs(1, 1), srv.base_url, "m", sampling_args=TOKEN_SAMPLING_ARGS
        )
    (out,) = res["outputs"]
    samples = build_samples(out)
    turns = list(srv.responses)
    assert len(turns) == 2
    if not drop_past_reasoning:  # the template keeps history verbatim: one merged sample
        (sample,) = samples
        full = turns[1]["prompt_token_ids"] + turns[1]["choices"][0]["token_ids"]
        assert sample.input_ids == full and sample.turns == [0, 1]
        return
    # thinking stripped from history: the second prompt does not extend the first sequence
    # (though it is longer than it, so only a token-by-token comparison can tell)
    first = turns[0]["prompt_token_ids"] + turns[0]["choices"][0]["token_ids"]
    assert len(turns[1]["prompt_token_ids"]) > len(first)
    assert turns[1]["prompt_token_ids"][: len(first)] != first
    assert len(samples) == 2
    for sample, turn in zip(samples, turns, strict=True):
        assert sample.prompt_ids == turn["prompt_token_ids"]
        assert sample.completion_ids == turn["choices"][0]["token_ids"]
        assert set(sample.completion_mask) == {1}
    assert [s.turns for s in samples] == [[0], [1]]
    assert all(s.reward == 0.0 for s in samples)  # build_samples leaves rewards to build_group


async def test_truncation_to_max_seq_len_mask_or_zero():
    calls = {"n": 0}

    def long_then_short(body):
        calls["n"] += 1
        pad = "x" * 200 if calls["n"] == 1 else ""
        return Reply(content=f"{pad}The answer is \\boxed{{3}}.")

    ds = Dataset.from_list([{"question": "What is 1 + 2?", "answer": "3"}])
    env = vf.SingleTurnEnv(dataset=ds, rubric=vf.Rubric(funcs=[boxed_correct]))
    async with ScriptedServer(long_then_short) as srv:
        res = await env.generate(
            env.eval_inputs(1, 2),
            srv.base_url,
            "m",
            sampling_args=TOKEN_SAMPLING_ARGS,
            max_concurrent=1,
        )
    outs = res["outputs"]
    assert [o["reward"] for o in outs] == [1.0, 1.0]
    lengths = [len(build_samples(o)[0]) for o in outs]
    limit = (lengths[0] + lengths[1]) // 2
    assert lengths[0] > limit >= lengths[1]

    keep = build_group(outs, max_seq_len=limit, truncation="keep")
    long, short = keep.samples
    assert long.is_truncated and not short.is_truncated and len(long) == limit
    assert long.input_ids == build_samples(outs[0])[0].input_ids[:limit]
    assert set(long.completion_mask) == {1} and keep.rewards == [1.0, 1.0]

    masked = build_group(outs, max_seq_len=limit, truncation="mask")
    assert set(masked.samples[0].completion_mask) == {0} and set(
        masked.samples[1].completion_mask
    ) == {1}
    assert masked.rewards == [1.0, 1.0] and masked.advantages == [0.0, 0.0]

    zeroed = build_group(outs, max_seq_len=limit, truncation="zero")
    assert zeroed.rewards == [0.0, 1.0] and zeroed.advantages == [-0.5, 0.5]
    assert set(zeroed.samples[0].completion_mask) == {1}
    assert [s.advantage for s in zeroed.samples] == [-0.5, 0.5]

    with pytest.raises(vf.ConfigError):
        build_group(outs, truncation="drop")


async def test_infra_failure_is_masked_not_learned_from():
    env = tool_env([(3, 4)])
    # the second model turn of one rollout (after the tool said 7) hits a 503 with no retries
    fault = Fault(status=503, times=1, match=r"^7$")
    async with ScriptedServer(faults=[fault]) as srv:
        client = OpenAIClient(srv.base_url, max_retries=0)
        res = await env.generate(
            env.eval_inputs(1, 3), client, "m", sampling_args=TOKEN_SAMPLING_ARGS
        )
        await client.aclose()
    outs = res["outputs"]
    bad = [o for o in outs if o["error"]]
    assert len(bad) == 1 and bad[0]["error"]["infra"] is True
    group = build_group(outs)
    i = outs.index(bad[0])
    assert group.masked == [j == i for j in range(3)]
    assert group.advantages == [0.0, 0.0, 0.0]  # the failed one's fake reward is not a baseline
    failed = [s for s in group.samples if s.rollout_index == bad[0]["rollout_index"]]
    assert len(failed) == 1 and set(failed[0].completion_mask) == {0}
    assert all(set(s.completion_mask) == {0, 1} for s in group.samples if s not in failed)


async def test_missing_token_data_is_an_error():
    env = tool_env([(3, 4)])
    async with ScriptedServer() as srv:
        res = await env.generate(env.eval_inputs(1, 1), srv.base_url, "m")
    with pytest.raises(vf.TrainingDataError, match="return_token_ids"):
        build_samples(res["outputs"][0])


def test_group_advantages():
    assert group_advantages([1.0, 0.0, 0.0, 1.0]) == [0.5, -0.5, -0.5, 0.5]
    normed = group_advantages([1.0, 0.0, 0.0, 1.0], normalize_std=True)
    assert normed == pytest.approx([1.0, -1.0, -1.0, 1.0], abs=1e-5)
    assert group_advantages([2.0, 2.0], normalize_std=True) == [0.0, 0.0]
    assert group_advantages([1.0, math.nan, 0.0]) == [0.5, 0.0, -0.5]
    assert group_advantages([1.0, 5.0, 0.0], valid=[True, False, True]) == [0.5, 0.0, -0.5]
    assert group_advantages([math.nan]) == [0.0]
