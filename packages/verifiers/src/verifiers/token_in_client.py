"""Token-in chat completions: turn n's prompt is turn n-1's exact ids plus the new messages' ids.

With plain chat completions the server re-renders the whole history through its chat template
every turn. A template that renders a past assistant turn differently from how it was sampled
(Qwen3 drops the `<think>` of turns before the last user message; tool-call rendering that
differs from the sampled text; non-canonical tokenisations) makes turn n's prompt ids differ
from turn n-1's prompt + completion ids, so a trainer sees contexts the policy never saw.

`TokenInClient` sends prime-rl's vLLM route instead: `POST {base}/chat/completions/tokens`, a
normal chat completion body plus `"tokens": [...]`, which the server uses verbatim as the prompt
ids (the messages are still sent: the server parses tools and reasoning from them). The ids are
the previous call's `prompt_token_ids + token_ids` followed by a *bridge*: the template's
rendering of the new (user/tool) messages and the generation prompt, obtained from vLLM's
`POST /tokenize` by rendering `[dummy assistant, *new]` and `[dummy assistant]` and keeping what
follows the dummy's end-of-turn token. The first turn, and any turn that cannot be stitched (no
remembered previous call, a truncated previous completion, new assistant messages, a template
whose rendering of the dummy is not a prefix, images or audio anywhere in the chat, a server
answering 404 on the route), go to the plain `/chat/completions` route.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from verifiers.errors import ModelError
from verifiers.messages import Messages, SamplingArgs
from verifiers.openai_http import OpenAIClient
from verifiers.openai_wire import (
    TOKEN_SAMPLING_ARGS,
    ModelResponse,
    json_default,
    merge_sampling_args,
    parse_chat_completion,
)

__all__ = ["TokenInClient"]

_BRIDGE_ROLES = frozenset({"user", "tool"})
_MEDIA_PARTS = frozenset({"image_url", "input_audio", "image"})


@dataclass(slots=True)
class _Turn:
    """One answered call: its reply message, the serialised prompt + reply as they were then
    (an environment that edits the history afterwards must not get the old ids), the ids."""

    message: Any
    fingerprint: bytes
    prompt_ids: list[int]  # the response's own lists (no copies: long contexts are large)
    completion_ids: list[int]
    truncated: bool


class TokenInClient(OpenAIClient):
    """An `OpenAIClient` whose later turns send the previous turn's exact token ids.

    Built by `vf.ClientConfig(client_type="openai_chat_completions_token")`, or directly like
    `OpenAIClient`. The previous turn is recognised by the identity of its assistant message
    (the object this client returned, which multi-turn environments put back into the next
    prompt), and used only while it and the messages before it are unchanged since that call;
    the client keeps the last `max_cached` answered calls (references to their replies' id
    lists; make it at least the number of rollouts running at once). It always asks for token ids and logprobs (`TOKEN_SAMPLING_ARGS`).
    `stats` counts calls sent token-in and message-in.
    """

    def __init__(self, *args: Any, max_cached: int = 4096, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # prime-rl mounts the token route under /v1; vLLM's /tokenize sits at the root
        self._tokens_url = self.base_url + "/chat/completions/tokens"
        self._tokenize_url = self.base_url.removesuffix("/v1") + "/tokenize"
        self.max_cached = max_cached
        self._turns: OrderedDict[int, _Turn] = OrderedDict()
        self._dummy_ids: dict[bytes, list[int]] = {}
        self._token_route = True  # until the server answers 404 on it
        self.stats: dict[str, int] = {"token_in": 0, "message_in": 0}

    def __repr__(self) -> str:
        return f"TokenInClient({self.base_url!r})"

    def __getstate__(self) -> dict[str, Any]:
        # remembered turns are keyed by id() of this process's message objects
        state = super().__getstate__()
        state["_turns"] = OrderedDict()
        return state

    async def get_response(
        self,
        messages: Messages,
        model: str,
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        sampling_args: SamplingArgs | None = None,
    ) -> ModelResponse:
        # token args win: without the returned ids there is nothing to send next turn
        sampling = merge_sampling_args(sampling_args or {}, TOKEN_SAMPLING_ARGS)
        body = self.build_body(messages, model, tools, sampling)
        previous, prompt_ids = await self._stitch(list(messages), body)
        data = None
        if prompt_ids is not None:
            try:
                data = await self._post(_dumps({**body, "tokens": prompt_ids}), self._tokens_url)
                self.stats["token_in"] += 1
            except ModelError as e:
                if not str(e).startswith("HTTP 404"):
                    raise
                # a vLLM without prime-rl's route: stop trying it, and send messages
                self._token_route = False
        if data is None:
            data = await self._post(_dumps(body))
            self.stats["message_in"] += 1
        response = parse_chat_completion(data)
        if previous is not None:
            self._turns.pop(previous, None)  # consumed: this reply's entry continues the chain
        self._remember(list(messages), response)
        return response

    # -- memory of answered calls ----------------------------------------------------------
    def _remember(self, prompt: list[Any], response: ModelResponse) -> None:
        if response.prompt_ids is None or not response.completion_ids:
            return
        fingerprint = _fingerprint([*prompt, response.message])
        if fingerprint is None:
            return
        # the entry holds the message, so its id() cannot be reused while it is cached
        self._turns[id(response.message)] = _Turn(
            response.message,
            fingerprint,
            response.prompt_ids,
            response.completion_ids,
            response.is_truncated,
        )
        while len(self._turns) > self.max_cached:
            self._turns.popitem(last=False)

    def _previous_turn(self, messages: list[Any]) -> tuple[int, _Turn] | None:
        """The remembered call whose reply is the last assistant message of `messages`."""
        for k in range(len(messages) - 1, -1, -1):
            message = messages[k]
            if not isinstance(message, dict) or message.get("role") != "assistant":
                continue
            turn = self._turns.get(id(message))
            if turn is None or turn.message is not message:
                return None
            if _fingerprint(messages[: k + 1]) != turn.fingerprint:
                return None  # edited in place since: the old ids no longer describe it
            return k, turn
        return None

    async def _stitch(
        self, messages: list[Any], body: dict[str, Any]
    ) -> tuple[int | None, list[int] | None]:
        """(cache key of the previous turn, prompt ids) for a token-in call, or (None, None)."""
        if not self._token_route or any(_has_media(m) for m in messages):
            # vLLM's /tokenize does not expand image/audio placeholders, so a stitched prompt
            # would hold one token where the model saw many: such chats go message-in
            return None, None
        found = self._previous_turn(messages)
        if found is None:
            return None, None
        k, turn = found
        new = messages[k + 1 :]
        if turn.truncated or not new or any(m.get("role") not in _BRIDGE_ROLES for m in new):
            return None, None
        bridge = await self._bridge(new, body, stop_id=turn.completion_ids[-1])
        if bridge is None:
            return None, None
        return id(turn.message), [*turn.prompt_ids, *turn.completion_ids, *bridge]

    # -- the bridge ------------------------------------------------------------------------
    async def _bridge(self, new: list[Any], body: dict[str, Any], stop_id: int) -> list[int] | None:
        """The ids the template puts after the previous reply's end-of-turn token: the new
        messages and the generation prompt."""
        dummy = _dummy_assistant(new)
        extra = {k: body[k] for k in ("tools", "chat_template_kwargs") if body.get(k)}
        key = orjson.dumps([dummy, extra], default=json_default)
        try:
            base = self._dummy_ids.get(key)
            if base is None:
                base = await self._tokenize(body["model"], [dummy], False, extra)
                self._dummy_ids[key] = base
            full = await self._tokenize(body["model"], [dummy, *new], True, extra)
        except ModelError:
            return None  # a server without /tokenize: message-in is still correct
        if full[: len(base)] != base:
            return None
        # the previous completion ends with the end-of-turn token the dummy's rendering has too;
        # what the template adds after it (a newline, say) belongs to the bridge
        for i in range(len(base) - 1, -1, -1):
            if base[i] == stop_id:
                return full[i + 1 :]
        return None

    async def _tokenize(
        self, model: str, messages: list[Any], add_generation_prompt: bool, extra: dict[str, Any]
    ) -> list[int]:
        request = {
            "model": model,
            "messages": messages,
            "add_generation_prompt": add_generation_prompt,
            **extra,
        }
        data = await self._post(_dumps(request), self._tokenize_url)
        tokens = data.get("tokens") if isinstance(data, dict) else None
        if not isinstance(tokens, list):
            raise ModelError(f"{self._tokenize_url} answered without 'tokens'")
        return [int(t) for t in tokens]


def _has_media(message: Any) -> bool:
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, list) and any(
        isinstance(part, dict) and part.get("type") in _MEDIA_PARTS for part in content
    )


def _fingerprint(messages: list[Any]) -> bytes | None:
    """A digest of the serialised messages (kept per cached turn instead of the history)."""
    try:
        data = orjson.dumps(messages, default=json_default)
    except TypeError:
        return None  # such a history is not remembered, so it goes message-in
    return hashlib.blake2b(data, digest_size=16).digest()


def _dumps(body: dict[str, Any]) -> bytes:
    try:
        return orjson.dumps(body, default=json_default)
    except TypeError as e:
        raise ModelError(f"request body is not JSON-serialisable: {e}") from e


def _dummy_assistant(new: list[Any]) -> dict[str, Any]:
    """A stand-in for the previous reply. Leading tool results need an assistant turn that
    called them (templates check); empty reasoning keeps templates that branch on whether
    `reasoning_content` is set rendering it the same way whatever follows."""
    call_ids = []
    for m in new:
        if m.get("role") != "tool":
            break
        if m.get("tool_call_id"):
            call_ids.append(m["tool_call_id"])
    if call_ids:
        calls = [
            {"id": c, "type": "function", "function": {"name": "f", "arguments": "{}"}}
            for c in call_ids
        ]
        return {"role": "assistant", "content": None, "reasoning_content": "", "tool_calls": calls}
    return {"role": "assistant", "content": "x", "reasoning_content": ""}
