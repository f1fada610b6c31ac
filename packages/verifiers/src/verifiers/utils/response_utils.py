"""What one model response holds: its messages and its token data
(`verifiers.utils.response_utils`, as classic environments and trainers import it)."""

from __future__ import annotations

from typing import Any

from verifiers.client import ModelResponse, parse_chat_completion, parse_text_completion
from verifiers.types import Messages, TrajectoryStepTokens


def as_model_response(response: Any) -> Any:
    """Our `ModelResponse` for a reply in any classic shape: already one, an openai
    `ChatCompletion` or `Completion` (0.1.x environments call the SDK themselves) or its
    JSON dict."""
    if response is None or isinstance(response, ModelResponse):
        return response
    dump = getattr(response, "model_dump", None)
    if not isinstance(response, dict) and dump is not None and hasattr(response, "choices"):
        response = dump()
    if isinstance(response, dict) and "choices" in response:
        choices = response["choices"]
        if choices and isinstance(choices[0], dict) and "text" in choices[0]:
            return parse_text_completion(response)
        return parse_chat_completion(response)
    return response


def response_tokens(response: Any, max_seq_len: int | None = None) -> TrajectoryStepTokens | None:
    """The response's prompt/completion token ids, masks and logprobs (None when the server
    sent no token ids). A completion running past `max_seq_len` tokens (prompt included) is
    cut there and marked truncated."""
    response = as_model_response(response)
    completion_ids = getattr(response, "completion_ids", None)
    if response is None or completion_ids is None:
        return None
    prompt_ids = response.prompt_ids or []
    logprobs = response.completion_logprobs or [0.0] * len(completion_ids)
    truncated = response.is_truncated
    if max_seq_len and len(prompt_ids) + len(completion_ids) > max_seq_len:
        keep = max(0, max_seq_len - len(prompt_ids))
        completion_ids, logprobs, truncated = completion_ids[:keep], logprobs[:keep], True
    return {
        "prompt_ids": prompt_ids,
        "prompt_mask": [0] * len(prompt_ids),
        "completion_ids": completion_ids,
        "completion_mask": [1] * len(completion_ids),
        "completion_logprobs": logprobs,
        "overlong_prompt": bool(max_seq_len and len(prompt_ids) > max_seq_len),
        "is_truncated": truncated,
    }


async def parse_response_tokens(
    response: Any, message_type: Any = None, max_seq_len: int | None = None
) -> TrajectoryStepTokens | None:
    """Upstream's async spelling: `(response, message_type, max_seq_len)` (0.1.9) or
    `(response, max_seq_len)` (0.1.11+)."""
    if isinstance(message_type, int) and max_seq_len is None:
        message_type, max_seq_len = None, message_type
    return response_tokens(response, max_seq_len)


async def parse_response_messages(response: Any, message_type: Any = None) -> Any:
    """The response's assistant message, as a one-message list; a text completion's text for
    `message_type="completion"` (0.1.x)."""
    reply = as_model_response(response)
    if message_type == "completion":
        return reply.text if reply.text is not None else reply.message.get("content") or ""
    return [reply.message]


async def parse_response_message(response: Any) -> Messages:
    """The 0.1.11+ name of `parse_response_messages`."""
    return [as_model_response(response).message]


async def parse_is_truncated(response: Any, message_type: Any = None) -> bool:
    """Whether the model stopped at its token limit."""
    return bool(as_model_response(response).is_truncated)


__all__ = [
    "as_model_response",
    "parse_is_truncated",
    "parse_response_message",
    "parse_response_messages",
    "parse_response_tokens",
    "response_tokens",
]
