"""The OpenAI-compatible wire format, without I/O: request pieces (sampling args, tools, JSON
bodies) and the parsing of chat and text completion replies into `ModelResponse`s.

Every client (`OpenAIClient`, `TokenInClient`, `SDKSurfaceClient`, a 0.3 `vf.Client`) and the
judge build requests and read replies through these functions, so a reply means the same thing
whichever path fetched it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from verifiers.errors import (
    EmptyModelResponseError,
    InvalidModelResponseError,
)
from verifiers.messages import AssistantMessage, SamplingArgs, ToolCall, assistant_message

#: Response header carrying the policy (weights) version that sampled the reply. Ours, not
#: vLLM's or prime-rl's: their servers send nothing, and a model call is then tagged with the
#: version current when it was sent (see docs/training.md). A top-level `policy_version` field
#: in the JSON body is read the same way.
POLICY_VERSION_HEADER = "X-Policy-Version"
#: Sampling args that make a vLLM server (>= 0.10.2) return prompt and completion token ids
#: and per-token logprobs; `RolloutStream` and `TokenInClient` always merge them into requests.
TOKEN_SAMPLING_ARGS: dict[str, Any] = {"logprobs": True, "extra_body": {"return_token_ids": True}}


@dataclass(slots=True)
class ResponseChoice:
    """`ModelResponse.choices[0]`: the message (attribute access works on it), the finish
    reason and, for a text completion, the text."""

    index: int
    message: AssistantMessage
    finish_reason: str | None
    text: str | None = None


@dataclass(slots=True)
class ModelResponse:
    """One parsed chat completion, or text completion (then `text` holds the continuation and
    `message` an assistant message with the same content)."""

    message: AssistantMessage
    finish_reason: str | None
    usage: dict[str, int]
    id: str | None = None
    model: str | None = None
    prompt_ids: list[int] | None = None
    completion_ids: list[int] | None = None
    completion_logprobs: list[float] | None = None
    policy_version: int | None = None  # as the server reported it (`POLICY_VERSION_HEADER`)
    text: str | None = None  # a text completion's continuation (`/v1/completions`)

    @property
    def is_truncated(self) -> bool:
        return self.finish_reason == "length"

    @property
    def choices(self) -> list[ResponseChoice]:
        """The reply in an openai response's shape: 0.1.2-0.1.7 environments read
        `state["responses"][i].choices[0].message.tool_calls` (or `.text`)."""
        return [ResponseChoice(0, self.message, self.finish_reason, self.text)]

    def summary(self) -> dict[str, Any]:
        """A small JSON-serialisable record of the reply (kept on trajectory steps)."""
        record: dict[str, Any] = {
            "id": self.id,
            "model": self.model,
            "finish_reason": self.finish_reason,
            "usage": self.usage,
        }
        if self.policy_version is not None:
            record["policy_version"] = self.policy_version
        return record


def json_default(obj: Any) -> Any:
    dump = getattr(obj, "model_dump", None)
    if dump is not None:
        return dump(exclude_none=True)
    if isinstance(obj, (set, tuple)):
        return list(obj)
    raise TypeError(f"cannot serialise {type(obj).__name__} in a request body")


def merge_sampling_args(base: SamplingArgs, override: SamplingArgs | None) -> SamplingArgs:
    """`override` over `base`, with `extra_body` merged key by key."""
    if not override:
        return dict(base)
    merged = {**base, **override}
    merged["extra_body"] = {**(base.get("extra_body") or {}), **(override.get("extra_body") or {})}
    return merged


def to_openai_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """Accept OpenAI tool dicts as they are, and classic `vf.Tool` dicts (`name`, `parameters`)."""
    if tool.get("type") == "function" and "function" in tool:
        return tool
    fn = {"name": tool["name"], "description": tool.get("description") or ""}
    fn["parameters"] = tool.get("parameters") or {"type": "object", "properties": {}}
    if tool.get("strict") is not None:
        fn["strict"] = tool["strict"]
    return {"type": "function", "function": fn}


def _parse_tool_calls(raw: Any) -> list[ToolCall]:
    if not isinstance(raw, list):
        raise InvalidModelResponseError(f"tool_calls is {type(raw).__name__}, expected a list")
    calls = []
    for i, call in enumerate(raw):
        fn = call.get("function") if isinstance(call, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise InvalidModelResponseError(f"tool call {i} has no function name: {call!r:.200}")
        args = fn.get("arguments")
        if not isinstance(args, str):  # some servers send parsed JSON; the API says string
            args = orjson.dumps(args if args is not None else {}).decode()
        calls.append(ToolCall(call.get("id") or f"call_{i}", fn["name"], args))
    return calls


def _first_choice(data: Any) -> Any:
    """The first choice of a completion body, once the body is known to be an object."""
    if not isinstance(data, dict):
        raise InvalidModelResponseError(f"reply is a JSON {type(data).__name__}, not an object")
    choices = data.get("choices")
    if not choices:
        raise EmptyModelResponseError("the endpoint returned no choices")
    return choices[0]


def _usage(read: Callable[[str], Any]) -> dict[str, int]:
    """Token usage in our names, from a reader of OpenAI's (`prompt_tokens`, ...)."""
    return {
        "input_tokens": int(read("prompt_tokens") or 0),
        "output_tokens": int(read("completion_tokens") or 0),
    }


def _reply(
    data: dict[str, Any], choice: dict[str, Any], message: AssistantMessage, text: str | None
) -> ModelResponse:
    """The fields every completion body carries the same way, chat or text."""
    return ModelResponse(
        message=message,
        finish_reason=choice.get("finish_reason"),
        usage=_usage((data.get("usage") or {}).get),
        id=data.get("id"),
        model=data.get("model"),
        policy_version=_as_version(data.get("policy_version")),
        text=text,
    )


def parse_chat_completion(data: Any) -> ModelResponse:
    """Turn a chat completion JSON body into a `ModelResponse`, or raise a `ModelError`."""
    choice = _first_choice(data)
    msg = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(msg, dict):
        raise InvalidModelResponseError("the first choice has no message")
    get = msg.get
    content = get("content")
    raw_calls = get("tool_calls")
    if content is None and not raw_calls:
        raise EmptyModelResponseError("the reply has neither content nor tool calls")
    # A tool-call-only reply has content "" (upstream 0.3.1), so text code never sees None.
    message = assistant_message("" if content is None else content)
    if raw_calls:
        message["tool_calls"] = _parse_tool_calls(raw_calls)
    reasoning = get("reasoning_content") or get("reasoning")
    if reasoning:
        message["reasoning_content"] = reasoning
    response = _reply(data, choice, message, None)
    # (without token ids or logprobs `_parse_tokens` has nothing to set: no call)
    if choice.get("token_ids") is not None or choice.get("logprobs"):
        _parse_tokens(data, choice, response)
    return response


def model_response(response: Any) -> ModelResponse:
    """A client's reply as a `ModelResponse`: ours as it is, or upstream 0.3's `vf.Response`
    (`id`, `model`, `usage`, `message` with `finish_reason` and `tokens`) that a client written
    for 0.3 returns."""
    if isinstance(response, ModelResponse):
        return response
    message = getattr(response, "message", None)
    if message is None:
        raise InvalidModelResponseError(
            f"the client returned {type(response).__name__}, not a model response"
        )
    get = message.get if isinstance(message, dict) else lambda k: getattr(message, k, None)
    content, calls = get("content"), get("tool_calls")
    if content is None and not calls:
        raise EmptyModelResponseError("the reply has neither content nor tool calls")
    assistant = AssistantMessage(content=content if content is not None else "")
    if calls:
        assistant["tool_calls"] = [ToolCall.of(c) for c in calls]
    if get("reasoning_content"):
        assistant["reasoning_content"] = get("reasoning_content")
    usage = getattr(response, "usage", None) or {}
    read = usage.get if isinstance(usage, dict) else lambda k: getattr(usage, k, None)
    out = ModelResponse(
        message=assistant,
        finish_reason=get("finish_reason"),
        usage=_usage(read),
        id=getattr(response, "id", None),
        model=getattr(response, "model", None),
    )
    tokens = get("tokens")
    if tokens:
        tok = tokens.get if isinstance(tokens, dict) else lambda k: getattr(tokens, k, None)
        out.prompt_ids = list(tok("prompt_ids") or [])
        out.completion_ids = list(tok("completion_ids") or [])
        out.completion_logprobs = list(tok("completion_logprobs") or [])
    return out


def _as_version(value: Any) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None  # a malformed tag is no tag: the caller's send-time version applies


def _parse_tokens(data: dict[str, Any], choice: dict[str, Any], response: ModelResponse) -> None:
    """Capture vLLM token ids and OpenAI-style logprobs when the server returned them."""
    prompt_ids = data.get("prompt_token_ids") or choice.get("prompt_token_ids")
    completion_ids = choice.get("token_ids")
    logprobs = choice.get("logprobs")
    content_lp = logprobs.get("content") if isinstance(logprobs, dict) else None
    if content_lp:
        response.completion_logprobs = [float(t.get("logprob", 0.0)) for t in content_lp]
        if completion_ids is None:
            first = content_lp[0].get("token", "")
            if isinstance(first, str) and first.startswith("token_id:"):
                completion_ids = [int(t["token"].rsplit(":", 1)[-1]) for t in content_lp]
    if completion_ids is not None:
        response.completion_ids = list(completion_ids)
        response.prompt_ids = list(prompt_ids) if prompt_ids is not None else None


def parse_text_completion(data: Any) -> ModelResponse:
    """Turn a `/v1/completions` JSON body into a `ModelResponse` (with `text` set), or raise a
    `ModelError`. Token ids as vLLM returns them: `prompt_token_ids` / `token_ids` on the
    choice (`return_token_ids`), or the sampled tokens spelled `token_id:N` in `logprobs.tokens`
    (`return_tokens_as_token_ids`); logprobs from `logprobs.token_logprobs`."""
    choice = _first_choice(data)
    text = choice.get("text") if isinstance(choice, dict) else None
    if not isinstance(text, str):
        raise EmptyModelResponseError("the first choice has no text")
    response = _reply(data, choice, AssistantMessage(content=text), text)
    completion_ids = choice.get("token_ids")
    logprobs = choice.get("logprobs")
    if isinstance(logprobs, dict):
        token_logprobs = logprobs.get("token_logprobs")
        if isinstance(token_logprobs, list):
            response.completion_logprobs = [float(lp or 0.0) for lp in token_logprobs]
        tokens = logprobs.get("tokens")
        if completion_ids is None and tokens and str(tokens[0]).startswith("token_id:"):
            completion_ids = [int(str(t).rsplit(":", 1)[-1]) for t in tokens]
    if completion_ids is not None:
        prompt_ids = choice.get("prompt_token_ids") or data.get("prompt_token_ids")
        response.completion_ids = list(completion_ids)
        response.prompt_ids = list(prompt_ids) if prompt_ids is not None else None
    return response


# Kept for callers of the private name.
_json_default = json_default
