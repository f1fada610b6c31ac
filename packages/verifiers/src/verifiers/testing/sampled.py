"""What the scripted model "samples" for a reply: its token ids (the byte-level tokenizer of
:mod:`verifiers.testing.tokenizer`), cut at stop strings and the token limit as vLLM cuts them,
with deterministic logprobs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from verifiers.testing import tokenizer as tok
from verifiers.testing.responders import Reply

__all__ = ["Sampled", "logprob", "logprob_content", "prompt_text", "sample", "text_offsets"]


@dataclass(slots=True)
class Sampled:
    """One generated choice after tokenisation and truncation."""

    content: str | None
    tool_calls: list[dict[str, Any]] | None
    reasoning: str | None
    ids: list[int]
    segments: list[tuple[str, int, int]]  # (kind, start, end) into ids
    finish_reason: str


def sample(reply: Reply, body: dict[str, Any], call_id: Callable[[], str]) -> Sampled:
    """`reply` as the model would have produced it for request `body`; `call_id()` names tool
    calls the reply left without an id."""
    calls = _norm_calls(reply.tool_calls, call_id) if reply.tool_calls else None
    content, calls, finish = _cut_at_stop(reply.content, calls, reply.finish_reason, body)
    reasoning = reply.reasoning_content
    ids, segments = _tokenise(reasoning, content, calls)
    if finish is None:
        finish = "tool_calls" if calls else "stop"
    limit = body.get("max_completion_tokens")
    if limit is None:
        limit = body.get("max_tokens")
    if isinstance(limit, int) and 0 <= limit < len(ids):
        return _truncated(ids[:limit], segments, limit)
    return Sampled(content, calls, reasoning, ids, segments, finish)


def _cut_at_stop(
    content: str | None,
    calls: list[dict[str, Any]] | None,
    finish: str | None,
    body: dict[str, Any],
) -> tuple[str | None, list[dict[str, Any]] | None, str | None]:
    """The content up to the first of the request's stop strings (no tool calls after it)."""
    stop = body.get("stop")
    if stop and content:
        found = [content.find(s) for s in ([stop] if isinstance(stop, str) else stop) if s]
        cut = min((i for i in found if i >= 0), default=-1)
        if cut >= 0:
            return content[:cut], None, finish or "stop"
    return content, calls, finish


def _tokenise(
    reasoning: str | None, content: str | None, calls: list[dict[str, Any]] | None
) -> tuple[list[int], list[tuple[str, int, int]]]:
    """The completion's ids (think tags, reasoning, content, tool calls, end) and where each
    part lies in them."""
    segments: list[tuple[str, int, int]] = []
    ids: list[int] = []
    for kind, text in (
        ("think_tag", "<think>" if reasoning else ""),
        ("reasoning", reasoning or ""),
        ("think_tag", "</think>" if reasoning else ""),
        ("content", content or ""),
        ("tool_calls", tok.render_tool_calls(calls) if calls else ""),
    ):
        if text:
            start = len(ids)
            ids.extend(tok.encode(text))
            segments.append((kind, start, len(ids)))
    ids.append(tok.END_ID)
    segments.append(("end", len(ids) - 1, len(ids)))
    return ids, segments


def _truncated(ids: list[int], segments: list[tuple[str, int, int]], limit: int) -> Sampled:
    """A completion cut at the token limit: what survives of each part, as text."""
    cut_segments: list[tuple[str, int, int]] = []
    reasoning: str | None = None
    content: str | None = None
    for kind, start, end in segments:
        if start >= limit:
            break
        end = min(end, limit)
        text = tok.decode(ids[start:end])
        if kind == "reasoning":
            reasoning = text
        elif kind == "think_tag":
            reasoning = reasoning or ""
        elif kind != "end":
            kind = "content"  # a cut tool call is plain text, as vLLM's parsers leave it
            content = (content or "") + text
        cut_segments.append((kind, start, end))
    return Sampled(content, None, reasoning, ids, cut_segments, "length")


def _norm_calls(calls: list[dict[str, Any]], call_id: Callable[[], str]) -> list[dict[str, Any]]:
    out = []
    for c in calls:
        fn = c.get("function") or c
        args = fn.get("arguments", "")
        if not isinstance(args, str):
            args = orjson.dumps(args).decode()
        out.append(
            {
                "id": c.get("id") or call_id(),
                "type": "function",
                "function": {"name": fn.get("name", ""), "arguments": args},
            }
        )
    return out


def logprob(token_id: int, pos: int) -> float:
    return -(1 + (token_id * 7919 + pos * 104729) % 997) / 500.0


def logprob_content(ids: list[int], pos: int, as_ids: bool) -> list[dict[str, Any]]:
    """A chat choice's `logprobs.content` for `ids` starting at position `pos`."""
    return [
        {
            "token": f"token_id:{t}" if as_ids else tok.token_str(t),
            "logprob": logprob(t, pos + k),
            "bytes": tok.token_bytes(t),
            "top_logprobs": [],
        }
        for k, t in enumerate(ids)
    ]


def text_offsets(ids: list[int], start: int) -> list[int]:
    """Each token's character offset in the text (vLLM's ``text_offset``)."""
    offsets = []
    for t in ids:
        offsets.append(start)
        start += len(tok.token_str(t))
    return offsets


def prompt_text(prompt: Any) -> str:
    """A `/v1/completions` prompt as text (a list holds one prompt; ids are decoded)."""
    if isinstance(prompt, list):
        prompt = prompt[0] if prompt else ""
    if isinstance(prompt, list):  # token ids
        return tok.decode(prompt, skip_special=False)
    return "" if prompt is None else str(prompt)
