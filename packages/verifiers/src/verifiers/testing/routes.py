"""The scripted server's HTTP side: one handler per OpenAI/vLLM route, reading the server's
settings (responder, latency, model name, ...) at request time so a test can change them
between requests."""

from __future__ import annotations

import asyncio
import codecs
import inspect
import itertools
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson
from aiohttp import web

from verifiers.openai_wire import POLICY_VERSION_HEADER
from verifiers.testing import tokenizer as tok
from verifiers.testing.faults import FaultScript
from verifiers.testing.recording import RequestLog
from verifiers.testing.responders import Reply
from verifiers.testing.sampled import (
    Sampled,
    logprob,
    logprob_content,
    prompt_text,
    sample,
    text_offsets,
)
from verifiers.testing.weights import ADMIN_ROUTES

if TYPE_CHECKING:
    from verifiers.testing.server import ScriptedServer

__all__ = ["OpenAIRoutes"]

_JSON = "application/json"
_ERROR_TYPES = {
    400: ("invalid_request_error", "bad_request"),
    404: ("invalid_request_error", "not_found"),
    429: ("rate_limit_error", "rate_limit_exceeded"),
    500: ("server_error", "internal_error"),
    503: ("server_error", "service_unavailable"),
}
Handler = Callable[[web.BaseRequest], Awaitable[web.StreamResponse]]


class OpenAIRoutes:
    """`dispatch` is the aiohttp handler: it routes by method and path (``/v1`` optional)."""

    def __init__(self, server: ScriptedServer, log: RequestLog, faults: FaultScript) -> None:
        self.server = server
        self.log = log
        self.faults = faults
        self._ids = itertools.count(1)
        self._prefix = os.urandom(4).hex()
        self._routes: dict[tuple[str, str], Handler] = {
            ("POST", "/chat/completions"): self.chat,
            ("POST", "/chat/completions/tokens"): self.chat_tokens,
            ("POST", "/completions"): self.completions,
            ("GET", "/models"): self.models,
            ("POST", "/tokenize"): self.tokenize,
            ("GET", "/health"): self.health,
        }
        for path in ADMIN_ROUTES:
            self._routes[("POST", path)] = self.admin

    async def dispatch(self, request: web.BaseRequest) -> web.StreamResponse:
        path = request.path.rstrip("/")
        if path.startswith("/v1/"):
            path = path[3:]
        handler = self._routes.get((request.method, path))
        if handler is None:
            return _error(404, f"no route {request.method} {request.path}")
        try:
            return await handler(request)
        except (TypeError, ValueError, KeyError, AttributeError, IndexError) as e:
            # a bad request body or a broken responder: answer instead of dropping the request
            return _error(500, f"scripted server error: {type(e).__name__}: {e}")

    def new_id(self, prefix: str) -> str:
        return f"{prefix}{self._prefix}{next(self._ids):016x}"

    async def _prepare(
        self, request: web.BaseRequest, completions: bool = False
    ) -> dict[str, Any] | web.StreamResponse | None:
        """Parse + record the body and apply faults/latency. Returns body, a response, or None
        when the connection was dropped."""
        try:
            body = orjson.loads(await request.read())
        except orjson.JSONDecodeError as e:
            return _error(400, f"invalid JSON body: {e}")
        if not isinstance(body, dict):
            return _error(400, "request body must be a JSON object")
        self.log.request(body)
        if self.faults:
            fault = self.faults.pick(body, completions)
            if fault is not None:
                if fault.kind == "http":
                    assert fault.status is not None
                    return _error(fault.status, fault.message, retry=fault.status == 429)
                if fault.kind == "disconnect":
                    if request.transport is not None:
                        request.transport.close()
                    return None
                await asyncio.sleep(fault.seconds)
        if self.server.latency_ms > 0:
            await asyncio.sleep(self.server.latency_ms / 1000.0)
        await self.server.weights.wait_until_resumed()
        return body

    def version_headers(self) -> dict[str, str] | None:
        if not self.server.report_policy_version:
            return None
        return {POLICY_VERSION_HEADER: str(self.server.weights.version)}

    async def _reply(self, body: dict[str, Any]) -> Reply:
        out = self.server.responder(body)
        if inspect.isawaitable(out):
            out = await out
        if isinstance(out, str):
            return Reply(content=out)
        if not isinstance(out, Reply):
            raise TypeError(f"responder returned {type(out).__name__}, expected Reply or str")
        return out

    def _sample(self, reply: Reply, body: dict[str, Any]) -> Sampled:
        return sample(reply, body, lambda: self.new_id("call_"))

    # ------------------------------------------------------------------ endpoints
    async def models(self, request: web.BaseRequest) -> web.StreamResponse:
        model = self.server.model
        data = {
            "object": "list",
            "data": [{"id": model, "object": "model", "created": 0, "owned_by": "verifiers"}],
        }
        return web.Response(body=orjson.dumps(data), content_type=_JSON)

    async def admin(self, request: web.BaseRequest) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = orjson.loads(raw) if raw.strip() else {}
        except orjson.JSONDecodeError as e:
            return _error(400, f"invalid JSON body: {e}")
        path = request.path.rstrip("/").removeprefix("/v1")
        reply = self.server.weights.handle(path, body if isinstance(body, dict) else {})
        return web.Response(body=orjson.dumps(reply), content_type=_JSON)

    async def health(self, request: web.BaseRequest) -> web.StreamResponse:
        return web.Response(status=200)

    async def tokenize(self, request: web.BaseRequest) -> web.StreamResponse:
        """vLLM's ``POST /tokenize``: ``messages`` (chat template) or ``prompt`` (plain text)."""
        try:
            body = orjson.loads(await request.read())
        except orjson.JSONDecodeError as e:
            return _error(400, f"invalid JSON body: {e}")
        if isinstance(body.get("messages"), list):
            ids = tok.encode_chat(
                body["messages"],
                body.get("tools"),
                body.get("add_generation_prompt", True),
                self.server.drop_past_reasoning,
            )
        else:
            ids = tok.encode(prompt_text(body.get("prompt")))
        reply = {"count": len(ids), "max_model_len": 1 << 20, "tokens": ids, "token_strs": None}
        return web.Response(body=orjson.dumps(reply), content_type=_JSON)

    async def chat_tokens(self, request: web.BaseRequest) -> web.StreamResponse:
        return await self.chat(request, token_in=True)

    async def chat(self, request: web.BaseRequest, token_in: bool = False) -> web.StreamResponse:
        body = await self._prepare(request)
        if not isinstance(body, dict):
            return body if body is not None else web.Response(status=204)
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return _error(400, "'messages' must be a non-empty list")
        tokens = body.get("tokens")
        if token_in and (
            not isinstance(tokens, list) or not all(isinstance(t, int) for t in tokens)
        ):
            return _error(400, "'tokens' must be a list of token ids")
        n = body.get("n") or 1
        replies = [await self._reply(body) for _ in range(n)]
        if replies[0].raw is not None:
            return _raw(replies[0].raw)
        gens = [self._sample(r, body) for r in replies]
        want_ids = bool(body.get("return_token_ids"))
        logprobs = bool(body.get("logprobs"))
        as_ids = bool(body.get("return_tokens_as_token_ids"))
        prompt_tokens, prompt_ids = self._chat_prompt(body, tokens if token_in else None)
        completion_tokens = sum(len(g.ids) for g in gens)
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        rid = self.new_id("chatcmpl-")
        model = body.get("model") or self.server.model
        if body.get("stream"):
            stream = ChatStream(rid, model, prompt_ids, logprobs, as_ids)
            return await stream.send(self, request, body, gens, usage)
        resp: dict[str, Any] = {
            "id": rid,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [_chat_choice(i, g, logprobs, as_ids, want_ids) for i, g in enumerate(gens)],
            "usage": usage,
        }
        if want_ids:
            resp["prompt_token_ids"] = prompt_ids
        self.log.response(resp)
        return web.Response(
            body=orjson.dumps(resp), content_type=_JSON, headers=self.version_headers()
        )

    def _chat_prompt(
        self, body: dict[str, Any], tokens: list[int] | None
    ) -> tuple[int, list[int] | None]:
        """(prompt token count, prompt ids when the request asked for them): the body's
        `tokens` on prime-rl's token-in route, else the chat template's rendering."""
        want_ids = bool(body.get("return_token_ids"))
        if tokens is not None:  # prime-rl's route: the ids are the prompt, the messages only parsed
            return len(tokens), list(tokens) if want_ids else None
        messages, tools = body["messages"], body.get("tools")
        drop_reasoning = self.server.drop_past_reasoning
        if want_ids:
            prompt_ids = tok.encode_chat(messages, tools, True, drop_reasoning)
            return len(prompt_ids), prompt_ids
        return tok.count(tok.render_chat(messages, tools, True, drop_reasoning)), None

    async def completions(self, request: web.BaseRequest) -> web.StreamResponse:
        """vLLM's ``/v1/completions``: ``n`` choices of ``text``; with ``logprobs`` (a count)
        the sampled tokens' ``token_logprobs`` (tokens spelled ``token_id:N`` with
        ``return_tokens_as_token_ids``); with ``return_token_ids`` each choice's
        ``prompt_token_ids`` and ``token_ids``. The responder sees the prompt as ``prompt`` and
        as one user message."""
        body = await self._prepare(request, completions=True)
        if not isinstance(body, dict):
            return body if body is not None else web.Response(status=204)
        prompt = prompt_text(body.get("prompt"))
        ask = {**body, "messages": [{"role": "user", "content": prompt}]}
        replies = [await self._reply(ask) for _ in range(body.get("n") or 1)]
        if replies[0].raw is not None:
            return _raw(replies[0].raw)
        prompt_ids = tok.encode(prompt)
        as_ids = bool(body.get("return_tokens_as_token_ids"))
        gens = [
            self._sample(Reply(content=r.content, finish_reason=r.finish_reason), body)
            for r in replies
        ]
        choices: list[dict[str, Any]] = []
        for i, g in enumerate(gens):
            text = (prompt if body.get("echo") else "") + (g.content or "")
            choice: dict[str, Any] = {
                "index": i,
                "text": text,
                "logprobs": None,
                "finish_reason": g.finish_reason,
                "stop_reason": None,
                "prompt_logprobs": None,
            }
            if body.get("logprobs") is not None:
                names = [f"token_id:{t}" if as_ids else tok.token_str(t) for t in g.ids]
                lps = [logprob(t, p) for p, t in enumerate(g.ids)]
                choice["logprobs"] = {
                    "tokens": names,
                    "token_logprobs": lps,
                    "top_logprobs": [{n: lp} for n, lp in zip(names, lps, strict=True)],
                    "text_offset": text_offsets(g.ids, len(prompt)),
                }
            if body.get("return_token_ids"):
                choice["prompt_token_ids"] = prompt_ids
                choice["token_ids"] = g.ids
            choices.append(choice)
        completion_tokens = sum(len(g.ids) for g in gens)
        resp = {
            "id": self.new_id("cmpl-"),
            "object": "text_completion",
            "created": int(time.time()),
            "model": body.get("model") or self.server.model,
            "choices": choices,
            "usage": {
                "prompt_tokens": len(prompt_ids),
                "completion_tokens": completion_tokens,
                "total_tokens": len(prompt_ids) + completion_tokens,
            },
        }
        self.log.response(resp)
        return web.Response(
            body=orjson.dumps(resp), content_type=_JSON, headers=self.version_headers()
        )


@dataclass
class ChatStream:
    """One streamed chat completion (SSE): its chunks, written in batches."""

    rid: str
    model: str
    prompt_ids: list[int] | None
    logprobs: bool
    as_ids: bool
    created: int = field(init=False, default_factory=lambda: int(time.time()))
    buf: list[bytes] = field(init=False, default_factory=list)

    def emit(self, choices: list[dict[str, Any]], **extra: Any) -> None:
        chunk = {
            "id": self.rid,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": choices,
            **extra,
        }
        self.buf.append(b"data: " + orjson.dumps(chunk) + b"\n\n")

    def choice(
        self, i: int, delta: dict[str, Any], ids: list[int], pos: int, finish: Any = None
    ) -> dict[str, Any]:
        c: dict[str, Any] = {
            "index": i,
            "delta": delta,
            "logprobs": {"content": logprob_content(ids, pos, self.as_ids)}
            if self.logprobs and ids
            else None,
            "finish_reason": finish,
        }
        if self.prompt_ids is not None:
            c["token_ids"] = ids
        return c

    def emit_choice(self, i: int, g: Sampled, step: int) -> None:
        first = self.choice(i, {"role": "assistant", "content": ""}, [], 0)
        if self.prompt_ids is not None and i == 0:
            self.emit([first], prompt_token_ids=self.prompt_ids)
        else:
            self.emit([first])
        end_ids: list[int] = []
        end_pos = len(g.ids)
        for kind, start, end in g.segments:
            if kind == "end":
                end_ids, end_pos = g.ids[start:end], start
                continue
            if kind == "tool_calls":
                calls = [dict(c, index=j) for j, c in enumerate(g.tool_calls or [])]
                self.emit([self.choice(i, {"tool_calls": calls}, g.ids[start:end], start)])
                continue
            if kind == "think_tag":
                self.emit([self.choice(i, {"reasoning_content": ""}, g.ids[start:end], start)])
                continue
            key = "reasoning_content" if kind == "reasoning" else "content"
            decoder = codecs.getincrementaldecoder("utf-8")("replace")
            for s in range(start, end, step):
                piece = g.ids[s : min(s + step, end)]
                text = decoder.decode(bytes(t for t in piece if t < 256), final=s + step >= end)
                self.emit([self.choice(i, {key: text}, piece, s)])
        self.emit([self.choice(i, {}, end_ids, end_pos, g.finish_reason)])

    async def send(
        self,
        routes: OpenAIRoutes,
        request: web.BaseRequest,
        body: dict[str, Any],
        gens: list[Sampled],
        usage: dict[str, int],
    ) -> web.StreamResponse:
        resp = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                **(routes.version_headers() or {}),
            }
        )
        await resp.prepare(request)
        step = routes.server.stream_chunk_tokens
        for i, g in enumerate(gens):
            self.emit_choice(i, g, step)
            if len(self.buf) >= 64:
                await resp.write(b"".join(self.buf))
                self.buf.clear()
        opts = body.get("stream_options") or {}
        if opts.get("include_usage"):
            self.emit([], usage=usage)
        self.buf.append(b"data: [DONE]\n\n")
        await resp.write(b"".join(self.buf))
        await resp.write_eof()
        return resp


def _chat_choice(
    i: int, g: Sampled, logprobs: bool, as_ids: bool, want_ids: bool
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": g.content}
    if g.tool_calls:
        message["tool_calls"] = g.tool_calls
    if g.reasoning is not None:
        message["reasoning_content"] = g.reasoning
    choice: dict[str, Any] = {
        "index": i,
        "message": message,
        "logprobs": {"content": logprob_content(g.ids, 0, as_ids)} if logprobs else None,
        "finish_reason": g.finish_reason,
    }
    if want_ids:
        choice["token_ids"] = g.ids
    return choice


def _error(status: int, message: str | None = None, retry: bool = False) -> web.Response:
    etype, code = _ERROR_TYPES.get(status, ("server_error", str(status)))
    body = {
        "error": {
            "message": message or f"scripted fault: HTTP {status}",
            "type": etype,
            "param": None,
            "code": code,
        }
    }
    headers = {"retry-after": "0"} if retry else None
    return web.Response(status=status, body=orjson.dumps(body), content_type=_JSON, headers=headers)


def _raw(raw: Any) -> web.Response:
    if isinstance(raw, str):
        raw = raw.encode()
    data = raw if isinstance(raw, bytes) else orjson.dumps(raw)
    return web.Response(body=data, content_type=_JSON)
