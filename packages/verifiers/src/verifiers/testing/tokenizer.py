"""A deterministic byte-level tokenizer and chat template for the scripted server.

Ids 0-255 are UTF-8 bytes; each special marker in :data:`SPECIAL_TOKENS` is one id from 256 up.
Special markers occurring anywhere in text (also inside message content) are single tokens,
like a Hugging Face tokenizer with its added tokens.

Chat template, per message: ``<|role|>\\n`` + body + ``<|end|>\\n``; then ``<|assistant|>\\n`` as the
generation prompt. An assistant body is ``<think>reasoning</think>`` (when the message carries
``reasoning_content``) + content + one ``<|tool_call|>name\\narguments`` per tool call. Tools, when
given, come first as a system block ``# Tools\\n<json>``.

Extension property: ``encode_chat(msgs + [assistant] + more)`` starts with
``encode_chat(msgs) + encode_completion(...)`` for the assistant message, because the completion ids
are the assistant body ids followed by the ``<|end|>`` id.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

__all__ = [
    "END_ID",
    "SPECIAL_TOKENS",
    "VOCAB_SIZE",
    "count",
    "decode",
    "encode",
    "encode_chat",
    "encode_completion",
    "render_assistant_body",
    "render_chat",
    "render_tool_calls",
    "token_bytes",
    "token_str",
]

SPECIAL_TOKENS: tuple[str, ...] = (
    "<|end|>",
    "<|system|>",
    "<|developer|>",
    "<|user|>",
    "<|assistant|>",
    "<|tool|>",
    "<|tool_call|>",
    "<|image|>",
)
SPECIAL_IDS: dict[str, int] = {tok: 256 + i for i, tok in enumerate(SPECIAL_TOKENS)}
END_ID: int = SPECIAL_IDS["<|end|>"]
VOCAB_SIZE: int = 256 + len(SPECIAL_TOKENS)
GENERATION_PROMPT = "<|assistant|>\n"

_SPECIAL_RE = re.compile("|".join(re.escape(t) for t in SPECIAL_TOKENS))
_TOKEN_STR: list[str] = [chr(b) if b < 0x80 else f"bytes:\\x{b:02x}" for b in range(256)] + list(
    SPECIAL_TOKENS
)
_TOKEN_BYTES: list[list[int]] = [[b] for b in range(256)] + [
    list(t.encode()) for t in SPECIAL_TOKENS
]


def encode(text: str) -> list[int]:
    """Token ids of ``text``: special markers are one id each, everything else UTF-8 bytes."""
    if "<|" not in text:
        return list(text.encode())
    ids: list[int] = []
    pos = 0
    for m in _SPECIAL_RE.finditer(text):
        ids.extend(text[pos : m.start()].encode())
        ids.append(SPECIAL_IDS[m.group()])
        pos = m.end()
    ids.extend(text[pos:].encode())
    return ids


def count(text: str) -> int:
    """``len(encode(text))`` without building the list."""
    n = len(text.encode())
    if "<|" in text:
        for m in _SPECIAL_RE.finditer(text):
            n -= len(m.group()) - 1
    return n


def decode(ids: list[int], *, skip_special: bool = True) -> str:
    """Text of ``ids``; invalid UTF-8 (e.g. a cut multi-byte char) becomes U+FFFD."""
    if skip_special:
        return bytes(i for i in ids if i < 256).decode("utf-8", "replace")
    out = bytearray()
    for i in ids:
        out.extend(_TOKEN_BYTES[i])
    return out.decode("utf-8", "replace")


def token_str(token_id: int) -> str:
    """Display string of a token (``bytes:\\xNN`` for non-ASCII bytes, like OpenAI)."""
    return _TOKEN_STR[token_id]


def token_bytes(token_id: int) -> list[int]:
    """UTF-8 bytes of a token."""
    return _TOKEN_BYTES[token_id]


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict):
                if part.get("type") == "text":
                    parts.append(str(part.get("text", "")))
                elif "image" in str(part.get("type", "")):
                    parts.append("<|image|>")
        return "".join(parts)
    return str(content)


def render_tool_calls(tool_calls: list[dict[str, Any]]) -> str:
    """``<|tool_call|>name\narguments`` per call (dict arguments are compact JSON)."""
    out: list[str] = []
    for call in tool_calls:
        fn = call.get("function") or call
        args = fn.get("arguments", "")
        if not isinstance(args, str):
            args = orjson.dumps(args).decode()
        out.append(f"<|tool_call|>{fn.get('name', '')}\n{args}")
    return "".join(out)


def render_assistant_body(
    content: Any = None,
    tool_calls: list[dict[str, Any]] | None = None,
    reasoning_content: str | None = None,
) -> str:
    """The text an assistant turn renders to, between ``<|assistant|>\\n`` and ``<|end|>``."""
    text = f"<think>{reasoning_content}</think>" if reasoning_content else ""
    text += _content_text(content)
    if tool_calls:
        text += render_tool_calls(tool_calls)
    return text


def render_chat(
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None = None,
    add_generation_prompt: bool = True,
    drop_past_reasoning: bool = False,
) -> str:
    """Render messages with the chat template (see module docstring).

    ``drop_past_reasoning``: leave out the reasoning of assistant turns before the last user
    message, as some real templates (Qwen3's) do; the extension property then breaks there."""
    parts: list[str] = []
    if tools:
        parts.append(f"<|system|>\n# Tools\n{orjson.dumps(tools).decode()}<|end|>\n")
    last_user = -1
    if drop_past_reasoning:
        last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    for i, msg in enumerate(messages):
        role = msg.get("role", "user")
        if role == "assistant":
            body = render_assistant_body(
                msg.get("content"),
                msg.get("tool_calls"),
                msg.get("reasoning_content") if i > last_user else None,
            )
        else:
            body = _content_text(msg.get("content"))
        parts.append(f"<|{role}|>\n{body}<|end|>\n")
    if add_generation_prompt:
        parts.append(GENERATION_PROMPT)
    return "".join(parts)


def encode_chat(
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None = None,
    add_generation_prompt: bool = True,
    drop_past_reasoning: bool = False,
) -> list[int]:
    """Prompt token ids of a chat request (what the server returns as ``prompt_token_ids``)."""
    return encode(render_chat(messages, tools, add_generation_prompt, drop_past_reasoning))


def encode_completion(
    content: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    reasoning_content: str | None = None,
) -> list[int]:
    """Completion ids of an untruncated reply: assistant body ids + the ``<|end|>`` id."""
    ids = encode(render_assistant_body(content, tool_calls, reasoning_content))
    ids.append(END_ID)
    return ids
