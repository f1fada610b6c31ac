"""A client object that only looks like the openai SDK: its own `chat.completions.create`.

`openai.AsyncOpenAI` instances are configuration (their URL and key; requests go over our
pooled HTTP client). An object that is *not* one but offers the SDK's surface (a wrapper that
adds tracing or caching, a test stand-in, a proxy to another provider) is called through that
surface instead, as classic verifiers always called it (`client.chat.completions.create(...)`,
`client.completions.create(...)` for text), so whatever it does is kept.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from verifiers.errors import EmptyModelResponseError, Error, ModelError
from verifiers.messages import AssistantMessage, Messages, SamplingArgs, ToolCall
from verifiers.openai_http import Client
from verifiers.openai_wire import (
    ModelResponse,
    merge_sampling_args,
    parse_chat_completion,
    parse_text_completion,
    to_openai_tool,
)


class SDKSurfaceClient(Client):
    """Calls `sdk.chat.completions.create` / `sdk.completions.create` of a duck-typed client."""

    def __init__(self, sdk: Any) -> None:
        self.sdk = sdk
        self.base_url = str(getattr(sdk, "base_url", "") or "")

    def __repr__(self) -> str:
        return f"SDKSurfaceClient({type(self.sdk).__name__})"

    def __getattr__(self, name: str) -> Any:
        # `state["client"].chat.completions.create(...)` in an environment reaches the object
        if name in ("chat", "completions", "models", "api_key"):
            return getattr(self.__dict__["sdk"], name)
        raise AttributeError(name)

    async def get_response(
        self,
        messages: Messages,
        model: str,
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        sampling_args: SamplingArgs | None = None,
    ) -> ModelResponse:
        kwargs = _sdk_kwargs(sampling_args)
        if tools:
            kwargs["tools"] = [to_openai_tool(t) for t in tools]
        reply = await _call(
            self.sdk.chat.completions.create, model=model, messages=messages, **kwargs
        )
        return read_chat_reply(reply)

    async def get_text_response(
        self, prompt: str, model: str, *, sampling_args: SamplingArgs | None = None
    ) -> ModelResponse:
        kwargs = _sdk_kwargs(sampling_args)
        reply = await _call(self.sdk.completions.create, model=model, prompt=prompt, **kwargs)
        return read_text_reply(reply)


def _sdk_kwargs(sampling_args: SamplingArgs | None) -> dict[str, Any]:
    args = merge_sampling_args({}, sampling_args)
    args.pop("n", None)
    extra = args.pop("extra_body", None)
    out = {k: v for k, v in args.items() if v is not None}
    if extra:
        out["extra_body"] = extra
    return out


async def _call(create: Any, **kwargs: Any) -> Any:
    try:
        reply = create(**kwargs)
        return await reply if inspect.isawaitable(reply) else reply
    except Error:
        raise
    except Exception as e:
        raise ModelError(f"the client's create() failed: {type(e).__name__}: {e}") from e


def read_chat_reply(reply: Any) -> ModelResponse:
    """A chat completion as the SDK-like object returned it (a dict, a pydantic model, or any
    object with the same attributes)."""
    if isinstance(reply, dict):
        return parse_chat_completion(reply)
    choice = _first_choice(reply)
    message = getattr(choice, "message", None)
    content = getattr(message, "content", None)
    calls = getattr(message, "tool_calls", None)
    if not isinstance(content, str) and not isinstance(calls, list):
        raise EmptyModelResponseError("the reply has neither content nor tool calls")
    assistant = AssistantMessage(content=content if isinstance(content, str) else "")
    if isinstance(calls, list) and calls:
        assistant["tool_calls"] = [ToolCall.of(c) for c in calls]
    return _response(reply, choice, assistant, None)


def read_text_reply(reply: Any) -> ModelResponse:
    """A text completion as the SDK-like object returned it."""
    if isinstance(reply, dict):
        return parse_text_completion(reply)
    choice = _first_choice(reply)
    text = getattr(choice, "text", None)
    if not isinstance(text, str):
        raise EmptyModelResponseError("the first choice has no text")
    return _response(reply, choice, AssistantMessage(content=text), text)


def _first_choice(reply: Any) -> Any:
    choices = getattr(reply, "choices", None)
    if not isinstance(choices, (list, tuple)) or not choices:
        raise EmptyModelResponseError("the reply has no choices")
    return choices[0]


def _response(reply: Any, choice: Any, message: AssistantMessage, text: str | None) -> Any:
    usage = getattr(reply, "usage", None)
    finish = getattr(choice, "finish_reason", None)
    return ModelResponse(
        message=message,
        finish_reason=finish if isinstance(finish, str) else None,
        usage={
            "input_tokens": _int(getattr(usage, "prompt_tokens", 0)),
            "output_tokens": _int(getattr(usage, "completion_tokens", 0)),
        },
        id=_str(getattr(reply, "id", None)),
        model=_str(getattr(reply, "model", None)),
        text=text,
    )


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
