"""Real HTTP traffic against verifiers.testing.ScriptedServer (openai SDK and aiohttp)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import aiohttp
import openai
import pytest
from openai import AsyncOpenAI

from verifiers.testing import (
    ArithmeticResponder,
    Fault,
    Reply,
    ScriptedServer,
    ScriptResponder,
    SequenceResponder,
    decode,
    encode,
    encode_chat,
    encode_completion,
)
from verifiers.testing.tokenizer import END_ID, SPECIAL_TOKENS, render_chat

ADD_TOOL = {
    "type": "function",
    "function": {
        "name": "add",
        "description": "Add two integers.",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    },
}
ECHO_TOOL = {
    "type": "function",
    "function": {
        "name": "echo",
        "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
    },
}
Q = [{"role": "user", "content": "What is 37 + 45?"}]


@pytest.fixture(scope="module")
def srv() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        yield server


_clients: list[AsyncOpenAI] = []


@pytest.fixture(autouse=True)
async def _close_clients() -> AsyncIterator[None]:
    yield
    while _clients:
        await _clients.pop().close()


def client(server: ScriptedServer, **kw: Any) -> AsyncOpenAI:
    kw.setdefault("max_retries", 0)
    c = AsyncOpenAI(base_url=server.base_url, api_key="x", **kw)
    _clients.append(c)
    return c


async def post(server: ScriptedServer, body: dict[str, Any], path: str = "/chat/completions"):
    async with (
        aiohttp.ClientSession() as s,
        s.post(server.base_url + path, json=body) as r,
    ):
        return r.status, r.headers.copy(), await r.read()


# ---------------------------------------------------------------- tokenizer


def test_tokenizer_roundtrip_and_specials() -> None:
    text = "héllo <|end|> wörld ✓"
    ids = encode(text)
    assert ids.count(END_ID) == 1
    assert all(0 <= i < 256 or i >= 256 for i in ids)
    assert decode(ids, skip_special=False) == text
    assert decode(ids) == "héllo  wörld ✓"
    assert encode("plain") == list(b"plain")
    rendered = render_chat(Q)
    assert rendered == "<|user|>\nWhat is 37 + 45?<|end|>\n<|assistant|>\n"
    assert encode_chat(Q)[0] == 256 + SPECIAL_TOKENS.index("<|user|>")


def test_tokenizer_extension_property_offline() -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": "{}"}}
    turns = [
        {"role": "assistant", "content": "hi", "reasoning_content": "think"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "assistant", "content": [{"type": "text", "text": "x"}]},
    ]
    for a in turns:
        p1 = encode_chat(Q, [ADD_TOOL])
        content = "x" if isinstance(a["content"], list) else a["content"]
        c1 = encode_completion(content, a.get("tool_calls"), a.get("reasoning_content"))
        p2 = encode_chat([*Q, a, {"role": "tool", "content": "82"}], [ADD_TOOL])
        assert p2[: len(p1) + len(c1)] == p1 + c1
        assert c1[-1] == END_ID


# ---------------------------------------------------------------- chat completions


async def test_plain_reply(srv: ScriptedServer) -> None:
    r = await client(srv).chat.completions.create(model="my-model", messages=Q)
    assert r.id.startswith("chatcmpl-")
    assert r.object == "chat.completion"
    assert r.model == "my-model"
    assert r.choices[0].message.role == "assistant"
    assert r.choices[0].message.content == "The answer is \\boxed{82}."
    assert r.choices[0].finish_reason == "stop"
    assert r.choices[0].message.tool_calls is None
    assert r.usage is not None
    assert r.usage.prompt_tokens == len(encode_chat(Q))
    assert r.usage.completion_tokens == len(encode_completion("The answer is \\boxed{82}."))
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens
    assert srv.requests[-1]["messages"] == Q


async def test_echo_and_arithmetic_ops(srv: ScriptedServer) -> None:
    c = client(srv)
    cases = {
        "hello there": "You said: hello there",
        "37*2": "The answer is \\boxed{74}.",
        "What is 10 - 13?": "The answer is \\boxed{-3}.",
    }
    for question, expected in cases.items():
        r = await c.chat.completions.create(
            model="m", messages=[{"role": "user", "content": question}]
        )
        assert r.choices[0].message.content == expected


async def test_tool_call_then_tool_result(srv: ScriptedServer) -> None:
    c = client(srv)
    r = await c.chat.completions.create(model="m", messages=Q, tools=[ECHO_TOOL, ADD_TOOL])
    choice = r.choices[0]
    assert choice.finish_reason == "tool_calls"
    calls = choice.message.tool_calls
    assert calls is not None and len(calls) == 1
    assert calls[0].id.startswith("call_")
    assert calls[0].function.name == "add"  # echo has a string parameter: skipped
    assert json.loads(calls[0].function.arguments) == {"a": 37, "b": 45}
    messages = [
        *Q,
        choice.message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": calls[0].id, "content": "82"},
    ]
    r2 = await c.chat.completions.create(model="m", messages=messages, tools=[ADD_TOOL])
    assert r2.choices[0].message.content == "The answer is \\boxed{82}."
    assert r2.choices[0].finish_reason == "stop"


async def test_no_fitting_tool_falls_back_to_arithmetic(srv: ScriptedServer) -> None:
    r = await client(srv).chat.completions.create(model="m", messages=Q, tools=[ECHO_TOOL])
    assert r.choices[0].message.content == "The answer is \\boxed{82}."


async def test_logprobs_token_ids_and_extension(srv: ScriptedServer) -> None:
    c = client(srv)
    extra = {"return_token_ids": True, "return_tokens_as_token_ids": True}
    r1 = await c.chat.completions.create(
        model="m", messages=Q, tools=[ADD_TOOL], logprobs=True, extra_body=extra
    )
    assert srv.requests[-1]["return_token_ids"] is True  # merged into the top-level body
    d1 = r1.model_dump()
    p1, c1 = d1["prompt_token_ids"], d1["choices"][0]["token_ids"]
    assert p1 == encode_chat(Q, [ADD_TOOL])
    msg1 = r1.choices[0].message
    assert c1 == encode_completion(None, [t.model_dump() for t in msg1.tool_calls or []])
    lp = r1.choices[0].logprobs
    assert lp is not None and lp.content is not None
    assert [int(t.token.split(":")[-1]) for t in lp.content] == c1
    assert all(t.logprob < 0 and t.top_logprobs == [] for t in lp.content)
    assert d1["usage"]["completion_tokens"] == len(c1)

    messages = [
        *Q,
        msg1.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": "x", "content": "82"},
    ]
    r2 = await c.chat.completions.create(
        model="m", messages=messages, tools=[ADD_TOOL], logprobs=True, extra_body=extra
    )
    d2 = r2.model_dump()
    p2, c2 = d2["prompt_token_ids"], d2["choices"][0]["token_ids"]
    assert p2[: len(p1) + len(c1)] == p1 + c1
    assert c2 == encode_completion("The answer is \\boxed{82}.")

    # deterministic, and without token-id strings the tokens are text with bytes
    r3 = await c.chat.completions.create(model="m", messages=Q, tools=[ADD_TOOL], logprobs=True)
    assert r3.choices[0].logprobs is not None and r3.choices[0].logprobs.content is not None
    lp3 = r3.choices[0].logprobs.content
    assert [t.logprob for t in lp3] == [t.logprob for t in lp.content]
    assert lp3[-1].token == "<|end|>" and lp3[0].bytes == list(lp3[0].token.encode())
    assert "prompt_token_ids" not in r3.model_dump()


async def test_max_tokens_truncation(srv: ScriptedServer) -> None:
    c = client(srv)
    r = await c.chat.completions.create(
        model="m", messages=Q, max_tokens=5, extra_body={"return_token_ids": True}
    )
    assert r.choices[0].finish_reason == "length"
    assert r.choices[0].message.content == "The a"
    assert r.usage is not None and r.usage.completion_tokens == 5
    assert r.model_dump()["choices"][0]["token_ids"] == list(b"The a")
    # max_completion_tokens wins; a tool call that does not fit becomes text
    r = await c.chat.completions.create(
        model="m", messages=Q, tools=[ADD_TOOL], max_completion_tokens=3
    )
    assert r.choices[0].finish_reason == "length"
    assert r.choices[0].message.tool_calls is None
    assert r.choices[0].message.content == "ad"  # <|tool_call|> is one (special) token
    # exactly enough room without the end token is still "length"
    full = encode_completion("The answer is \\boxed{82}.")
    r = await c.chat.completions.create(model="m", messages=Q, max_tokens=len(full) - 1)
    assert r.choices[0].finish_reason == "length"
    assert r.choices[0].message.content == "The answer is \\boxed{82}."
    r = await c.chat.completions.create(model="m", messages=Q, max_tokens=len(full))
    assert r.choices[0].finish_reason == "stop"


async def test_stop_sequences(srv: ScriptedServer) -> None:
    r = await client(srv).chat.completions.create(model="m", messages=Q, stop=["\\boxed"])
    assert r.choices[0].message.content == "The answer is "
    assert r.choices[0].finish_reason == "stop"


async def test_streaming(srv: ScriptedServer) -> None:
    c = client(srv)
    stream = await c.chat.completions.create(
        model="m", messages=Q, stream=True, stream_options={"include_usage": True}
    )
    text, finish, usage = "", None, None
    async for chunk in stream:
        assert chunk.id.startswith("chatcmpl-")
        if chunk.usage is not None:
            usage = chunk.usage
            assert chunk.choices == []
        for ch in chunk.choices:
            text += ch.delta.content or ""
            finish = ch.finish_reason or finish
    assert text == "The answer is \\boxed{82}."
    assert finish == "stop"
    assert usage is not None and usage.completion_tokens == len(encode_completion(text))

    stream = await c.chat.completions.create(model="m", messages=Q, tools=[ADD_TOOL], stream=True)
    calls, finish = [], None
    async for chunk in stream:
        assert chunk.usage is None
        for ch in chunk.choices:
            calls += ch.delta.tool_calls or []
            finish = ch.finish_reason or finish
    assert finish == "tool_calls"
    assert [c.function.name for c in calls] == ["add"]  # type: ignore[union-attr]
    assert calls[0].id.startswith("call_") and calls[0].index == 0

    stream = await c.chat.completions.create(model="m", messages=Q, max_tokens=5, stream=True)
    text, finish = "", None
    async for chunk in stream:
        for ch in chunk.choices:
            text += ch.delta.content or ""
            finish = ch.finish_reason or finish
    assert (text, finish) == ("The a", "length")


async def test_streaming_token_data_matches_non_streaming() -> None:
    text = "Ünïcödé ✓ " * 3  # multi-byte chars cut across chunks
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "x"}],
        "logprobs": True,
        "return_token_ids": True,
        "return_tokens_as_token_ids": True,
    }
    with ScriptedServer(
        lambda b: Reply(content=text, reasoning_content="hm"),
        stream_chunk_tokens=4,
    ) as s2:
        status, headers, raw = await post(s2, {**body, "stream": True})
        assert status == 200 and headers["Content-Type"].startswith("text/event-stream")
        events = [e[6:] for e in raw.decode().split("\n\n") if e]
        assert events[-1] == "[DONE]"
        chunks = [json.loads(e) for e in events[:-1]]
        ids, lp, content, reasoning = [], [], "", ""
        for ch in chunks:
            for c in ch["choices"]:
                ids += c["token_ids"]
                lp += (c["logprobs"] or {}).get("content", [])
                content += c["delta"].get("content") or ""
                reasoning += c["delta"].get("reasoning_content") or ""
        assert chunks[0]["prompt_token_ids"] == encode_chat(body["messages"])
        _, _, raw2 = await post(s2, body)
        full = json.loads(raw2)
        assert ids == full["choices"][0]["token_ids"]
        assert ids == encode_completion(text, reasoning_content="hm")
        assert lp == full["choices"][0]["logprobs"]["content"]
        assert content == text == full["choices"][0]["message"]["content"]
        assert reasoning == "hm" == full["choices"][0]["message"]["reasoning_content"]


async def test_malformed_raw_replies() -> None:
    replies = [Reply(raw={"id": "x", "choices": []}), Reply(raw=b"{not json"), "plain"]
    with ScriptedServer(SequenceResponder(replies)) as s:
        r = await client(s).chat.completions.create(model="m", messages=Q)
        assert r.choices == []
        status, _, raw = await post(s, {"model": "m", "messages": Q})
        assert status == 200 and raw == b"{not json"
        r = await client(s).chat.completions.create(model="m", messages=Q)
        assert r.choices[0].message.content == "plain"
        r = await client(s).chat.completions.create(model="m", messages=Q)
        assert r.choices[0].message.content == "plain"  # the last reply repeats


async def test_bad_requests(srv: ScriptedServer) -> None:
    status, _, raw = await post(srv, {"model": "m"})
    assert status == 400 and "messages" in json.loads(raw)["error"]["message"]
    async with aiohttp.ClientSession() as s:
        async with s.post(srv.base_url + "/chat/completions", data=b"{oops") as r:
            assert r.status == 400
        async with s.get(srv.base_url + "/nope") as r:
            assert r.status == 404


async def test_responder_errors_become_500() -> None:
    with ScriptedServer(lambda body: 42) as s:  # type: ignore[arg-type,return-value]
        status, _, raw = await post(s, {"model": "m", "messages": Q})
        assert status == 500 and "TypeError" in json.loads(raw)["error"]["message"]
    with ScriptedServer() as s:
        status, _, _ = await post(s, {"model": "m", "messages": ["not a dict"]})
        assert status == 500


async def test_models_and_completions(srv: ScriptedServer) -> None:
    c = client(srv)
    models = await c.models.list()
    assert [m.id for m in models.data] == ["mock-model"]
    r = await c.completions.create(
        model="m", prompt="2 + 2 =", extra_body={"return_token_ids": True}, logprobs=1
    )
    assert r.id.startswith("cmpl-")
    assert r.choices[0].text == "The answer is \\boxed{4}."
    d = r.model_dump()["choices"][0]
    assert d["prompt_token_ids"] == encode("2 + 2 =")
    assert d["token_ids"] == encode_completion(r.choices[0].text)
    assert r.choices[0].logprobs is not None
    assert len(r.choices[0].logprobs.token_logprobs or []) == len(d["token_ids"])
    r = await c.completions.create(model="m", prompt="hello", max_tokens=3)
    assert r.choices[0].text == "You" and r.choices[0].finish_reason == "length"


async def test_async_context_manager_in_loop() -> None:
    async with ScriptedServer(lambda body: "ok") as s:
        r = await client(s).chat.completions.create(model="m", messages=Q)
        assert r.choices[0].message.content == "ok"


async def test_async_responder() -> None:
    async def responder(body: dict[str, Any]) -> Reply:
        await asyncio.sleep(0)
        return Reply(content="async")

    with ScriptedServer(responder) as s:
        r = await client(s).chat.completions.create(model="m", messages=Q)
        assert r.choices[0].message.content == "async"


async def test_request_log_is_bounded_and_clearable() -> None:
    with ScriptedServer(max_recorded=4) as s:
        c = client(s)
        for i in range(10):
            await c.chat.completions.create(
                model="m", messages=[{"role": "user", "content": str(i)}]
            )
        assert s.request_count == 10
        assert 1 <= len(s.requests) <= 4
        assert s.requests[-1]["messages"][0]["content"] == "9"
        s.clear()
        assert s.requests == [] and s.request_count == 0


# ---------------------------------------------------------------- faults


async def test_fault_429() -> None:
    with ScriptedServer(faults=[Fault(status=429, times=2)]) as s:
        with pytest.raises(openai.RateLimitError):
            await client(s).chat.completions.create(model="m", messages=Q)
        status, headers, raw = await post(s, {"model": "m", "messages": Q})
        assert status == 429 and headers["retry-after"] == "0"
        assert json.loads(raw)["error"]["code"] == "rate_limit_exceeded"
        r = await client(s).chat.completions.create(model="m", messages=Q)
        assert r.choices[0].message.content == "The answer is \\boxed{82}."
        assert s.request_count == 3


async def test_fault_500_503_and_match() -> None:
    faults = [Fault(status=503, times=1, match="boom"), Fault(status=500, times=1)]
    with ScriptedServer(faults=faults) as s:
        with pytest.raises(openai.InternalServerError) as e:
            await client(s).chat.completions.create(model="m", messages=Q)
        assert e.value.status_code == 500
        boom = [{"role": "user", "content": "boom"}]
        status, _, _ = await post(s, {"model": "m", "messages": boom})
        assert status == 503
        status, _, _ = await post(s, {"model": "m", "messages": boom})
        assert status == 200
        # the openai SDK retries 5xx when allowed to
        s.set_faults([Fault(status=500, times=1)])
        c = client(s, max_retries=1)
        r = await c.chat.completions.create(model="m", messages=Q)
        assert r.choices[0].message.content is not None
        assert s.request_count == 5


async def test_fault_disconnect() -> None:
    with ScriptedServer(faults=[Fault(kind="disconnect", times=1)]) as s:
        with pytest.raises(openai.APIConnectionError):
            await client(s).chat.completions.create(model="m", messages=Q)
        r = await client(s).chat.completions.create(model="m", messages=Q)
        assert r.choices[0].finish_reason == "stop"


async def test_fault_timeout() -> None:
    with ScriptedServer(faults=[Fault(kind="timeout", times=1, seconds=5)]) as s:
        t0 = time.perf_counter()
        with pytest.raises(openai.APITimeoutError):
            await client(s, timeout=0.3).chat.completions.create(model="m", messages=Q)
        assert time.perf_counter() - t0 < 3
        r = await client(s, timeout=5).chat.completions.create(model="m", messages=Q)
        assert r.choices[0].finish_reason == "stop"
    # a short hold answers normally afterwards
    with ScriptedServer(faults=[Fault(kind="timeout", seconds=0.2)]) as s:
        t0 = time.perf_counter()
        r = await client(s).chat.completions.create(model="m", messages=Q)
        assert time.perf_counter() - t0 >= 0.2
        assert r.choices[0].finish_reason == "stop"


async def test_latency_is_non_blocking() -> None:
    with ScriptedServer(latency_ms=200) as s:
        c = client(s)
        t0 = time.perf_counter()
        await asyncio.gather(*[c.chat.completions.create(model="m", messages=Q) for _ in range(20)])
        assert 0.2 <= time.perf_counter() - t0 < 2.0


async def test_fail_rate_is_seeded() -> None:
    async def statuses(seed: int) -> list[int]:
        with ScriptedServer(fail_rate=0.5, seed=seed) as s:
            return [(await post(s, {"model": "m", "messages": Q}))[0] for _ in range(30)]

    a, b = await statuses(7), await statuses(7)
    assert a == b
    assert set(a) == {200, 500}


# ---------------------------------------------------------------- responders


def test_arithmetic_wrong_rate_deterministic() -> None:
    wrong = ArithmeticResponder(wrong_rate=0.25)
    right = ArithmeticResponder()
    n_wrong = 0
    for i in range(400):
        body = {"messages": [{"role": "user", "content": f"What is {i} + {i + 1}?"}]}
        w, r = wrong(body), right(body)
        assert r.content == f"The answer is \\boxed{{{2 * i + 1}}}."
        assert w == wrong(body)
        n_wrong += w != r
    assert 60 < n_wrong < 140
    assert ArithmeticResponder(wrong_rate=1.0)({"messages": Q}).content == (
        "The answer is \\boxed{83}."
    )


def test_arithmetic_tool_args_and_list_content() -> None:
    body = {
        "tools": [ADD_TOOL],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "add -3 and 4"}]}],
    }
    reply = ArithmeticResponder()(body)
    assert reply.tool_calls == [{"name": "add", "arguments": {"a": -3, "b": 4}}]
    body["messages"] = [{"role": "user", "content": "add 3"}]  # not enough integers
    assert ArithmeticResponder()(body).content == "You said: add 3"


async def test_script_responder() -> None:
    script = ScriptResponder(
        [
            ("^broken", Reply(content="<answer>unclosed")),
            (lambda body: body.get("temperature") == 0.5, "hot"),
            ("multi", [Reply(content="first"), "second"]),
            ("result", lambda body: Reply(content="from callable")),
        ]
    )
    with ScriptedServer(script) as s:
        c = client(s)

        async def say(messages: list[dict[str, Any]], **kw: Any) -> str | None:
            r = await c.chat.completions.create(model="m", messages=messages, **kw)
            return r.choices[0].message.content

        assert await say([{"role": "user", "content": "broken output"}]) == "<answer>unclosed"
        assert await say([{"role": "user", "content": "x"}], temperature=0.5) == "hot"
        turn = [{"role": "user", "content": "multi"}]
        assert await say(turn) == "first"
        turn2 = [
            *turn,
            {"role": "assistant", "content": "first"},
            {"role": "user", "content": "multi"},
        ]
        assert await say(turn2) == "second"
        turn3 = [*turn2, {"role": "assistant", "content": "second"}, *turn]
        assert await say(turn3) == "second"
        tool = [*turn, {"role": "tool", "content": "result"}]
        assert await say(tool) == "from callable"
        assert await say(Q) == "The answer is \\boxed{82}."  # fallback


def test_sequence_responder_cycle() -> None:
    seq = SequenceResponder(["a", "b"], cycle=True)
    assert [seq({}) for _ in range(5)] == ["a", "b", "a", "b", "a"]
    with pytest.raises(ValueError):
        SequenceResponder([])


def test_fault_validation() -> None:
    assert Fault().status == 500
    with pytest.raises(ValueError):
        Fault(kind="explode")


# ---------------------------------------------------------------- CLI


def test_cli_serves_until_sigterm() -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "verifiers.testing", "serve", "--port", "0", "--wrong-rate", "1"]
    with subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    ) as proc:
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert line.startswith("READY http://127.0.0.1:") and line.rstrip().endswith("/v1")
            with openai.OpenAI(base_url=line.split()[1], api_key="x", max_retries=0) as c:
                r = c.chat.completions.create(model="m", messages=Q)  # type: ignore[arg-type]
            assert r.choices[0].message.content == "The answer is \\boxed{83}."
        finally:
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
