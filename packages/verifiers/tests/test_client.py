import asyncio
import socket

import pytest
from openai import AsyncOpenAI

import verifiers as vf
from verifiers.client import parse_chat_completion, resolve_client
from verifiers.testing import Fault, Reply, ScriptedServer, SequenceResponder, encode_chat

MESSAGES = [{"role": "user", "content": "What is 2 + 3?"}]


def fast_client(url: str, **kw) -> vf.OpenAIClient:
    kw.setdefault("retry_base_delay", 0.01)
    return vf.OpenAIClient(url, api_key="test", **kw)


async def test_plain_reply_and_usage(server):
    client = fast_client(server.base_url)
    response = await client.get_response(MESSAGES, "mock", sampling_args={"temperature": 0.0})
    assert "\\boxed{5}" in response.message["content"]
    assert response.message.role == "assistant"
    assert response.usage["input_tokens"] > 0 and response.usage["output_tokens"] > 0
    assert response.completion_ids is None  # nothing asked for
    assert server.requests[-1]["temperature"] == 0.0
    await client.aclose()


async def test_token_ids_and_logprobs_are_captured(server):
    client = fast_client(server.base_url)
    response = await client.get_response(
        MESSAGES,
        "mock",
        sampling_args={"logprobs": True, "extra_body": {"return_token_ids": True}},
    )
    assert response.prompt_ids == encode_chat(MESSAGES)
    assert response.completion_ids and len(response.completion_logprobs) == len(
        response.completion_ids
    )
    assert all(lp <= 0 for lp in response.completion_logprobs)
    # extra_body keys travel as top-level body keys, as the openai SDK sends them
    assert server.requests[-1]["return_token_ids"] is True
    await client.aclose()


async def test_tokens_as_token_id_strings(server):
    client = fast_client(server.base_url)
    response = await client.get_response(
        MESSAGES,
        "mock",
        sampling_args={"logprobs": True, "extra_body": {"return_tokens_as_token_ids": True}},
    )
    assert response.completion_ids and all(isinstance(t, int) for t in response.completion_ids)
    await client.aclose()


@pytest.mark.parametrize("status", [429, 500, 503])
async def test_retries_transient_statuses(status):
    with ScriptedServer(faults=[Fault(status=status, times=2)]) as srv:
        client = fast_client(srv.base_url)
        response = await client.get_response(MESSAGES, "mock")
        assert "\\boxed{5}" in response.message["content"]
        assert srv.request_count == 3
        await client.aclose()


async def test_retries_dropped_connections_and_timeouts():
    faults = [Fault(kind="disconnect", times=1), Fault(kind="timeout", times=1, seconds=5)]
    with ScriptedServer(faults=faults) as srv:
        client = fast_client(srv.base_url, timeout=0.5)
        response = await client.get_response(MESSAGES, "mock")
        assert response.message["content"]
        assert srv.request_count == 3
        await client.aclose()


async def test_gives_up_with_a_clear_error():
    with ScriptedServer(faults=[Fault(status=503, times=None)]) as srv:
        client = fast_client(srv.base_url, max_retries=2)
        with pytest.raises(vf.ModelConnectionError, match="after 3 attempts; last: HTTP 503"):
            await client.get_response(MESSAGES, "mock")
        assert srv.request_count == 3
        await client.aclose()


async def test_client_errors_are_not_retried():
    with ScriptedServer(faults=[Fault(status=400, times=None, message="bad request")]) as srv:
        client = fast_client(srv.base_url)
        with pytest.raises(vf.ModelError, match="HTTP 400.*bad request"):
            await client.get_response(MESSAGES, "mock")
        assert srv.request_count == 1
        await client.aclose()


async def test_context_length_error_is_overlong_prompt():
    fault = Fault(status=400, times=None, message="This model's maximum context length is 8 tokens")
    with ScriptedServer(faults=[fault]) as srv:
        client = fast_client(srv.base_url)
        with pytest.raises(vf.OverlongPromptError):
            await client.get_response(MESSAGES, "mock")
        await client.aclose()


async def test_unreachable_endpoint():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once closed
    client = fast_client(f"http://127.0.0.1:{port}/v1", max_retries=1)
    with pytest.raises(vf.ModelConnectionError, match="failed after 2 attempts"):
        await client.get_response(MESSAGES, "mock")
    await client.aclose()


@pytest.mark.parametrize(
    ("raw", "error", "text"),
    [
        ({"choices": []}, vf.EmptyModelResponseError, "no choices"),
        (
            {"choices": [{"message": {"role": "assistant", "content": None}}]},
            vf.EmptyModelResponseError,
            "neither content",
        ),
        ({"choices": [{"index": 0}]}, vf.InvalidModelResponseError, "no message"),
        ("not json at all", vf.InvalidModelResponseError, "not JSON"),
    ],
)
async def test_malformed_replies(raw, error, text):
    with ScriptedServer(SequenceResponder([Reply(raw=raw)], cycle=True)) as srv:
        client = fast_client(srv.base_url)
        with pytest.raises(error, match=text):
            await client.get_response(MESSAGES, "mock")
        await client.aclose()


def test_tool_calls_are_normalised():
    data = {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"function": {"name": "add", "arguments": {"a": 1}}}],
                },
                "finish_reason": "tool_calls",
            }
        ]
    }
    response = parse_chat_completion(data)
    call = response.message["tool_calls"][0]
    assert call == {
        "id": "call_0",
        "type": "function",
        "function": {"name": "add", "arguments": '{"a":1}'},
    }


def test_tool_call_without_name_is_invalid():
    data = {"choices": [{"message": {"content": None, "tool_calls": [{"function": {}}]}}]}
    with pytest.raises(vf.InvalidModelResponseError, match="no function name"):
        parse_chat_completion(data)


async def test_bare_async_openai_is_accepted(server):
    oai = AsyncOpenAI(base_url=server.base_url, api_key="sk-test", default_headers={"X-Team": "t"})
    client, owned = resolve_client(oai)
    assert owned and client.base_url == server.base_url
    response = await client.get_response(MESSAGES, "mock")
    assert response.message["content"]
    await client.aclose()


async def test_round_robin_over_endpoints():
    with ScriptedServer() as a, ScriptedServer() as b:
        client, _ = resolve_client(
            vf.ClientConfig(
                endpoint_configs=[vf.EndpointConfig(a.base_url), vf.EndpointConfig(b.base_url)]
            )
        )
        assert isinstance(client, vf.MultiEndpointClient)
        await asyncio.gather(*(client.get_response(MESSAGES, "m") for _ in range(4)))
        assert a.request_count == 2 and b.request_count == 2
        assert client.for_group(0) is not client.for_group(1)
        await client.aclose()


def test_unsupported_client_type():
    with pytest.raises(vf.ConfigError, match="unsupported client int"):
        resolve_client(42)
