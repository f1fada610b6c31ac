"""Text environments (`message_type="completion"`) against a real OpenAI-compatible server.

Reproduces classic verifiers 0.1.x (PrimeIntellect-ai/verifiers v0.1.9,
verifiers/envs/environment.py `get_model_response`: `client.completions.create(model,
prompt=<str>, ...)`; verifiers/utils/response_utils.py: the completion is
`choices[0].text`, tokens from `choices[0].prompt_token_ids` / `token_ids` /
`logprobs.token_logprobs`; verifiers/utils/message_utils.py `concat_messages`: text turns are
joined by string concatenation) and vLLM's `/v1/completions` reply with `return_token_ids`,
`return_tokens_as_token_ids` and `logprobs`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import aiohttp
import orjson
import pytest
from datasets import Dataset

import verifiers as vf
from verifiers.client import MultiEndpointClient, OpenAIClient, parse_text_completion
from verifiers.envs.classic_records import chat_completion
from verifiers.testing import ScriptedServer, encode, encode_completion
from verifiers.training import build_samples

TOKENS = {"logprobs": True, "extra_body": {"return_token_ids": True}}


def _continue(body: dict[str, Any]) -> str:
    """The scripted base model: ' A<n>' where n counts the questions in the prompt so far,
    and a stop marker once the prompt has three of them."""
    n = body["prompt"].count("Q")
    return f" A{n}" + (" END" if n >= 3 else "")


@pytest.fixture(scope="module")
def srv() -> Iterator[ScriptedServer]:
    with ScriptedServer(_continue) as server:
        yield server


@pytest.fixture(autouse=True)
def _fresh(srv: ScriptedServer) -> None:
    srv.clear()


class Quiz(vf.MultiTurnEnv):
    """Appends the next question to the running text until the model writes END."""

    async def env_response(self, messages: Any, state: vf.State, **kwargs: Any) -> Any:
        assert isinstance(messages, str)
        if "END" in messages:
            state["final_env_response"] = "\n(done)"
            return "\n(done)"
        return f"\nQ{messages.count('Q') + 1}:"


def exact(completion: str, answer: str) -> float:
    return 1.0 if completion.strip() == answer else 0.0


def text_env(cls: type = vf.SingleTurnEnv, **kwargs: Any) -> Any:
    ds = Dataset.from_dict({"prompt": ["Q1:"], "answer": ["A1"]})
    return cls(dataset=ds, message_type="completion", rubric=vf.Rubric(funcs=[exact]), **kwargs)


def test_single_turn_sends_text_and_keeps_tokens(srv: ScriptedServer) -> None:
    """One turn: a string prompt to /v1/completions, a string completion scored by a reward
    function, and the trainer's token data (prompt ids with mask 0, completion ids with mask
    1, one logprob per completion token)."""
    out = text_env().evaluate_sync(srv.base_url, "base", sampling_args=TOKENS)["outputs"][0]
    assert srv.requests[0]["prompt"] == "Q1:" and "messages" not in srv.requests[0]
    assert srv.requests[0]["logprobs"] == 1  # the completions API's logprobs is a count
    assert (out["prompt"], out["completion"], out["reward"]) == ("Q1:", " A1", 1.0)
    assert out["error"] is None and out["stop_condition"] == "single_turn_completed"
    (step,) = out["trajectory"]
    assert (step["prompt"], step["completion"]) == ("Q1:", " A1")
    tokens = step["tokens"]
    assert tokens["prompt_ids"] == encode("Q1:")
    assert tokens["prompt_mask"] == [0] * len(encode("Q1:"))
    assert tokens["completion_ids"] == encode_completion(" A1")
    assert tokens["completion_mask"] == [1] * len(tokens["completion_ids"])
    logprobs = srv.responses[0]["choices"][0]["logprobs"]["token_logprobs"]
    assert tokens["completion_logprobs"] == logprobs
    (sample,) = build_samples(out)
    assert sample.prompt_ids == encode("Q1:")
    assert sample.completion_ids == encode_completion(" A1")


def test_multi_turn_appends_text(srv: ScriptedServer) -> None:
    """Each turn's prompt is the previous prompt, the model's text and the environment's text;
    the rollout's completion is everything after the prompt, final response included."""
    env = text_env(Quiz, max_turns=5)
    out = env.evaluate_sync(srv.base_url, "base", state_columns=["trajectory"])["outputs"][0]
    prompts = [r["prompt"] for r in srv.requests]
    assert prompts == ["Q1:", "Q1: A1\nQ2:", "Q1: A1\nQ2: A2\nQ3:"]
    assert out["completion"] == " A1\nQ2: A2\nQ3: A3 END\n(done)"
    assert out["stop_condition"] == "has_final_env_response"
    assert [s["completion"] for s in out["trajectory"]] == [" A1", " A2", " A3 END"]
    assert out["num_turns"] == 3.0


def test_token_ids_from_token_id_strings(srv: ScriptedServer) -> None:
    """vLLM's `return_tokens_as_token_ids` spells each sampled token `token_id:N` in
    `logprobs.tokens`: the completion ids come from there when no `token_ids` field came."""
    sampling = {"logprobs": True, "extra_body": {"return_tokens_as_token_ids": True}}
    out = text_env().evaluate_sync(srv.base_url, "base", sampling_args=sampling)["outputs"][0]
    tokens = out["trajectory"][0]["tokens"]
    assert tokens["completion_ids"] == encode_completion(" A1")
    assert tokens["prompt_ids"] == []  # the server sent none


async def test_client_text_completion_over_endpoints(srv: ScriptedServer) -> None:
    """`get_text_response` on one endpoint and on several (a refusing one is skipped), with
    chat-only sampling names translated for the completions API."""
    one = OpenAIClient(srv.base_url, max_retries=0)
    sampling = {"max_completion_tokens": 2, "n": 3, "top_logprobs": 2, "logprobs": True}
    r = await one.get_text_response("Q1:", "base", sampling_args=sampling)
    sent = srv.requests[-1]
    assert (sent["max_tokens"], sent["logprobs"]) == (2, 2)
    assert "n" not in sent and "top_logprobs" not in sent and "max_completion_tokens" not in sent
    assert (r.text, r.message["content"], r.finish_reason) == (" A", " A", "length")
    assert r.usage == {"input_tokens": 3, "output_tokens": 2}
    dead = OpenAIClient("http://127.0.0.1:9/v1", max_retries=0)
    many = MultiEndpointClient([dead, OpenAIClient(srv.base_url, max_retries=0)])
    r = await many.for_group(0).get_text_response("Q1: A1\nQ2:", "base")
    assert r.text == " A2"
    with pytest.raises(vf.ConfigError, match="string prompt"):
        await one.get_text_response([{"role": "user", "content": "x"}], "base")  # type: ignore[arg-type]
    await one.aclose()
    await many.aclose()


async def test_scripted_server_completions_like_vllm(srv: ScriptedServer) -> None:
    """The scripted server's /v1/completions: `n` choices, logprobs with `text_offset` and
    `top_logprobs`, per-choice prompt/completion ids, usage over all choices."""
    body = {"model": "m", "prompt": "Q1:", "n": 2, "logprobs": 1, "return_token_ids": True}
    async with aiohttp.ClientSession() as s:
        async with s.post(srv.base_url + "/completions", data=orjson.dumps(body)) as r:
            data = await r.json()
    assert data["object"] == "text_completion" and len(data["choices"]) == 2
    first = data["choices"][1]
    assert first["index"] == 1 and first["text"] == " A1"
    assert first["prompt_token_ids"] == encode("Q1:")
    assert first["token_ids"] == encode_completion(" A1")
    lp = first["logprobs"]
    assert lp["text_offset"][:2] == [3, 4]  # after the 3 prompt characters, one per byte
    assert [next(iter(t.values())) for t in lp["top_logprobs"]] == lp["token_logprobs"]
    assert data["usage"]["completion_tokens"] == 2 * len(first["token_ids"])
    assert srv.responses[-1]["id"] == data["id"]


def test_text_response_parse_errors() -> None:
    """A completions reply without choices or text is a ModelError, not a silent ''."""
    with pytest.raises(vf.EmptyModelResponseError):
        parse_text_completion({"choices": []})
    with pytest.raises(vf.EmptyModelResponseError, match="no text"):
        parse_text_completion({"choices": [{"message": {"content": "chat?"}}]})
    with pytest.raises(vf.InvalidModelResponseError):
        parse_text_completion(["not", "an", "object"])


def test_configuration_errors() -> None:
    """What a text environment cannot have is refused when it is built (classic 0.1.x raised
    for system_prompt/few_shot too); an unknown message_type is named."""
    text = Dataset.from_dict({"prompt": ["Q1:"], "answer": ["A1"]})
    chat = Dataset.from_dict({"prompt": [[{"role": "user", "content": "Q1"}]], "answer": ["A1"]})
    with pytest.raises(vf.ConfigError, match="system_prompt"):
        vf.SingleTurnEnv(dataset=text, message_type="completion", system_prompt="Be brief.")
    with pytest.raises(vf.ConfigError, match="chat messages"):
        vf.SingleTurnEnv(dataset=chat, message_type="completion")
    with pytest.raises(vf.ConfigError, match="'chat' or 'completion'"):
        vf.SingleTurnEnv(dataset=text, message_type="text")
    questions = Dataset.from_dict({"question": ["Q1:"], "answer": ["A1"]})
    env = vf.SingleTurnEnv(dataset=questions, message_type="completion")
    assert env.get_dataset()[0]["prompt"] == "Q1:"  # the question is the text prompt


def test_env_response_must_be_text(srv: ScriptedServer) -> None:
    """Chat messages from env_response in a text environment end the rollout with a
    recorded ConfigError instead of a mixed prompt."""

    class Chatty(vf.MultiTurnEnv):
        async def env_response(self, messages: Any, state: vf.State, **kwargs: Any) -> Any:
            return [{"role": "user", "content": "next"}]

    out = text_env(Chatty, max_turns=3).evaluate_sync(srv.base_url, "base")["outputs"][0]
    assert out["error"]["error"] == "ConfigError" and "returns text" in out["error"]["message"]
    assert out["completion"] == " A1" and len(srv.requests) == 1


def test_classic_018_state_response_is_a_completion(srv: ScriptedServer) -> None:
    """0.1.8 kept an openai `Completion` on a text step (prime-rl v0.2 reads `.choices[0]`
    and `.usage` off it)."""
    out = text_env().evaluate_sync(srv.base_url, "base", state_columns=["trajectory"])
    step = out["outputs"][0]["trajectory"][0]
    completion = chat_completion(step)
    assert type(completion).__name__ == "Completion"
    assert completion.choices[0].text == " A1"
    assert completion.usage is not None and completion.usage.prompt_tokens == 3


async def test_rollout_stream_trains_on_text_environments() -> None:
    """A trainer's stream over a text environment: each group's samples carry the prompt and
    completion token ids the server returned, and the calls are tagged with their policy
    version like chat calls."""
    ds = Dataset.from_dict({"prompt": ["Q1:", "Q1: A1\nQ2:"], "answer": ["A1", "A2"]})
    env = vf.SingleTurnEnv(dataset=ds, message_type="completion", rubric=vf.Rubric(funcs=[exact]))
    async with ScriptedServer(_continue) as server:
        stream = vf.RolloutStream(
            env, server.base_url, "base", env.get_dataset(), rollouts_per_example=2,
            filter_zero_variance=False,
        )  # fmt: skip
        stream.set_policy_version(3)
        groups = [group async for group in stream]
        assert {r["prompt"] for r in server.requests} == {"Q1:", "Q1: A1\nQ2:"}
    assert sorted(g.example_id for g in groups) == [0, 1]
    for group in groups:
        prompt = ds[group.example_id]["prompt"]
        reply = " A1" if group.example_id == 0 else " A2"
        assert [r["completion"] for r in group.rollouts] == [reply, reply]
        assert group.policy_versions == [[3], [3]]
        for sample in group.samples:
            assert sample.prompt_ids == encode(prompt)
            assert sample.completion_ids == encode_completion(reply)
            assert len(sample.completion_logprobs) == len(sample.completion_ids)


def test_text_rollout_without_token_ids_is_a_training_data_error(srv: ScriptedServer) -> None:
    """A text rollout recorded without token ids says how to ask for them, as a chat one does."""
    out = text_env().evaluate_sync(srv.base_url, "base")["outputs"][0]
    assert "trajectory" not in out
    with pytest.raises(vf.TrainingDataError, match="return_token_ids"):
        build_samples(out)


async def test_response_utils_read_text_completions() -> None:
    """0.1.9 verifiers/utils/response_utils.py: `parse_response_messages(response,
    "completion")` is the text, `parse_response_tokens` reads a `Completion`'s token data."""
    from openai.types import Completion

    from verifiers.utils.response_utils import parse_response_messages, parse_response_tokens

    body = {
        "id": "cmpl-1", "object": "text_completion", "created": 0, "model": "m",
        "choices": [{
            "index": 0, "text": " A1", "finish_reason": "stop",
            "logprobs": {"tokens": ["token_id:32", "token_id:65"], "token_logprobs": [-0.5, -0.25]},
            "prompt_token_ids": [81, 49], "token_ids": [32, 65],
        }],
    }  # fmt: skip
    reply = Completion.model_validate(body)
    assert await parse_response_messages(reply, "completion") == " A1"
    tokens = await parse_response_tokens(reply, "completion")
    assert tokens["prompt_ids"] == [81, 49] and tokens["completion_ids"] == [32, 65]
    assert tokens["completion_logprobs"] == [-0.5, -0.25]
