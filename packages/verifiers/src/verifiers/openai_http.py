"""Model access over HTTP: the `Client` interface and a thin, fast client for OpenAI-compatible
chat completion endpoints (and text completions, `/v1/completions`, for
`message_type="completion"` environments).

The hot path speaks the HTTP API directly over a pooled aiohttp session with orjson, because
an RL orchestrator sends hundreds of requests per second from one process and the openai SDK
spends milliseconds of CPU per request building response objects. A bare `openai.AsyncOpenAI`
(or `OpenAI`) is accepted as configuration: its base URL, key and headers are reused.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import random
import re
import socket
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson
import yarl

from verifiers.errors import (
    ConfigError,
    EndpointUnreachableError,
    InvalidModelResponseError,
    ModelConnectionError,
    ModelError,
    OverlongPromptError,
)
from verifiers.messages import Messages, SamplingArgs
from verifiers.openai_wire import (
    POLICY_VERSION_HEADER,
    ModelResponse,
    json_default,
    parse_chat_completion,
    parse_text_completion,
    to_openai_tool,
)

RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
_CONTEXT_ERROR_MARKERS = ("context length", "context_length", "maximum context", "too long")
# An address that cannot take this connection at all: with one of these beside a refusal (the
# IPv6 address of "localhost" in a container without IPv6), the refusal is the real answer.
_NO_ROUTE_ERRNOS = frozenset({errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT, errno.ENETUNREACH})
logger = logging.getLogger("verifiers.client")


def _refused(exc: BaseException) -> bool:
    """Whether a connect failure means nothing listens there (ECONNREFUSED), as opposed to a
    timeout or reset that may pass. Happy-eyeballs joins the errors of several addresses into
    one OSError ("Multiple exceptions: [Errno 111] ..., [Errno 99] ..."): parse those."""
    os_error = getattr(exc, "os_error", exc)
    if not isinstance(os_error, OSError) or isinstance(os_error, socket.gaierror):
        return False
    if os_error.errno is not None:
        return os_error.errno == errno.ECONNREFUSED
    codes = {int(c) for c in re.findall(r"\[Errno (\d+)\]", str(os_error))}
    return errno.ECONNREFUSED in codes and codes <= _NO_ROUTE_ERRNOS | {errno.ECONNREFUSED}


def _bodies_are_bytes(obj: Any) -> str:
    # request bodies are serialised here with orjson; aiohttp's own JSON path is never used
    raise TypeError("OpenAIClient sends bytes bodies; aiohttp's json= is not used")


@dataclass(slots=True)
class _PooledSession:
    """One event loop's connection pool and the generator that closes it with the loop."""

    session: aiohttp.ClientSession
    closer: AsyncGenerator[None, None]


async def _close_at_loop_shutdown(session: aiohttp.ClientSession) -> AsyncGenerator[None, None]:
    # A session is bound to the loop that made it. `asyncio.run` (and so `evaluate_sync`)
    # closes every live async generator before it closes its loop, so parking one per session
    # releases the pool even when nobody calls `aclose()` -- no "Unclosed client session".
    try:
        yield
    finally:
        await session.close()


# One model call, waiting for the client that should make it (`Client.forward`).
ModelCall = Callable[["Client"], Awaitable[ModelResponse]]


class Client:
    """Interface every model client implements.

    A client either answers model calls itself (it overrides `get_response`, and
    `get_text_response` where it serves text completions) or passes them on to other
    clients (it overrides `forward`; `verifiers.wrapped_client`)."""

    base_url: str = ""

    async def get_response(
        self,
        messages: Messages,
        model: str,
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        sampling_args: SamplingArgs | None = None,
    ) -> ModelResponse:
        """The model's reply to the chat `messages` (offered `tools`, sampled with
        `sampling_args`)."""
        return await self.forward(
            lambda c: c.get_response(messages, model, tools=tools, sampling_args=sampling_args)
        )

    async def forward(self, call: ModelCall) -> ModelResponse:
        """Run `call` on the client (or clients) this one passes its calls on to."""
        raise NotImplementedError(
            f"{type(self).__name__} neither answers model calls (get_response) nor forwards "
            "them (forward)"
        )

    async def get_text_response(
        self, prompt: str, model: str, *, sampling_args: SamplingArgs | None = None
    ) -> ModelResponse:
        """Continue the text `prompt` (OpenAI's legacy `/v1/completions`): what environments
        with `message_type="completion"` ask for."""
        raise ConfigError(
            f"{type(self).__name__} does not serve text completions (message_type="
            "'completion'); use a vf.OpenAIClient"
        )

    def for_group(self, index: int) -> Client:
        """The client a whole rollout group should use (one endpoint per group)."""
        return self

    async def check_connection(self) -> list[EndpointUnreachableError]:
        """Open (and close) a TCP connection to each endpoint before a run.

        Raises `EndpointUnreachableError` when no endpoint can be reached; returns the problems
        of endpoints that were skipped because others can be. A timeout is not a verdict here
        (the requests' own retries deal with a slow network)."""
        return []

    async def aclose(self) -> None:
        """Release pooled connections of the current event loop."""

    @property
    def wire_id(self) -> str:
        """This client's identity across processes: copies of it sent to another process
        (pickled, as a Ray actor receives it with each group) keep it, so the receiver can use
        one instance, and one connection pool, for all of them (`rebind`)."""
        wire_id = self.__dict__.get("_wire_id")
        if wire_id is None:
            wire_id = self.__dict__["_wire_id"] = uuid.uuid4().hex
        return wire_id

    def __getstate__(self) -> dict[str, Any]:
        self.wire_id  # noqa: B018 - fixed before copying, so every copy shares it
        return dict(self.__dict__)

    def rebind(self, known: dict[str, Client]) -> Client:
        """The instance a receiving process should use for this (unpickled) client: the one
        in `known` with the same `wire_id`, else this one, remembered there."""
        return known.setdefault(self.wire_id, self)

    async def close(self) -> None:
        """Same as `aclose` (the name classic clients use)."""
        await self.aclose()


_OPENAI_SDK_ATTRIBUTES = frozenset(
    {"chat", "completions", "models", "embeddings", "responses", "beta", "api_key"}
)
_OWN_HEADERS = frozenset({"Content-Type", "Authorization"})


class OpenAIClient(Client):
    """Chat completions over HTTP with retries on 429, 5xx, timeouts and dropped connections.

    `OpenAIClient("http://host:8000/v1", api_key=...)`, or `OpenAIClient(AsyncOpenAI(...))`.
    """

    def __init__(
        self,
        base_url: Any = None,
        api_key: str | None = None,
        *,
        headers: dict[str, str] | None = None,
        timeout: float = 600.0,
        connect_timeout: float = 10.0,
        max_retries: int = 5,
        retry_base_delay: float = 0.25,
        retry_max_delay: float = 16.0,
        max_connections: int = 0,
    ) -> None:
        self._openai_client: Any = None
        if base_url is not None and not isinstance(base_url, str):
            openai_client = base_url  # an openai.AsyncOpenAI / OpenAI instance
            self._openai_client = openai_client
            base_url = str(openai_client.base_url)
            api_key = api_key or getattr(openai_client, "api_key", None)
            custom = getattr(openai_client, "_custom_headers", None) or {}
            headers = {**custom, **(headers or {})}
            client_timeout = getattr(openai_client, "timeout", None)
            if isinstance(client_timeout, (int, float)):
                timeout = float(client_timeout)
        if base_url is None:
            base_url = os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1")
        if api_key is None:
            api_key = os.environ.get("OPENAI_API_KEY", "EMPTY")
        self.base_url = base_url.rstrip("/")
        self._url = self.base_url + "/chat/completions"
        self._text_url = self.base_url + "/completions"
        self._headers = {"Content-Type": "application/json", **(headers or {})}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._timeout = aiohttp.ClientTimeout(total=timeout, sock_connect=connect_timeout)
        self.max_retries = max_retries
        self.retry_base_delay = retry_base_delay
        self.retry_max_delay = retry_max_delay
        self._max_connections = max_connections
        self._rename_max_tokens = "api.openai.com" in self.base_url
        self._sessions: dict[asyncio.AbstractEventLoop, _PooledSession] = {}

    def __getattr__(self, name: str) -> Any:
        # Classic environments call the OpenAI SDK on `state["client"]` (`.chat.completions
        # .create(...)`): those attributes come from the `AsyncOpenAI` this client was made
        # from, or from one built for the same endpoint on first use.
        if name not in _OPENAI_SDK_ATTRIBUTES:
            raise AttributeError(name)
        sdk = self.__dict__.get("_openai_client")
        if sdk is None:
            key = self._headers.get("Authorization", "").removeprefix("Bearer ") or "EMPTY"
            extra = {k: v for k, v in self._headers.items() if k not in _OWN_HEADERS}
            import openai  # on first use only (see verifiers.openai_sdk)

            sdk = openai.AsyncOpenAI(
                base_url=self.base_url, api_key=key, default_headers=extra or None
            )
            self.__dict__["_openai_client"] = sdk
        return getattr(sdk, name)

    def __repr__(self) -> str:
        return f"OpenAIClient({self.base_url!r})"

    def __getstate__(self) -> dict[str, Any]:
        # Pooled sessions belong to this process's event loops, and an SDK client holds an
        # httpx pool: a copy (a Ray actor's) builds its own lazily. Key and headers travel.
        state = super().__getstate__()
        state["_openai_client"] = None
        state["_sessions"] = {}
        return state

    def _live_session(self) -> aiohttp.ClientSession | None:
        """This loop's pooled session while it is open (no coroutine: once per request)."""
        pooled = self._sessions.get(asyncio.get_running_loop())
        return pooled.session if pooled is not None and not pooled.session.closed else None

    async def _session(self) -> aiohttp.ClientSession:
        live = self._live_session()
        if live is not None:
            return live
        loop = asyncio.get_running_loop()
        for old in [lp for lp in self._sessions if lp.is_closed()]:
            del self._sessions[old]
        connector = aiohttp.TCPConnector(limit=self._max_connections, ttl_dns_cache=300)
        # the headers are the session's own: aiohttp then copies them per request, without
        # merging a request's headers into them key by key
        session = aiohttp.ClientSession(
            connector=connector,
            timeout=self._timeout,
            headers=self._headers,
            json_serialize=_bodies_are_bytes,
        )
        pooled = _PooledSession(session, _close_at_loop_shutdown(session))
        self._sessions[loop] = pooled  # before any await: concurrent first calls share it
        await pooled.closer.__anext__()  # the first step registers it with the loop
        return session

    async def aclose(self) -> None:
        pooled = self._sessions.pop(asyncio.get_running_loop(), None)
        if pooled is not None:
            await pooled.closer.aclose()  # runs its `finally`, which closes the session

    async def check_connection(self) -> list[EndpointUnreachableError]:
        url = yarl.URL(self.base_url)
        host, port = url.host, url.port
        if not host or port is None:
            raise ConfigError(f"model endpoint {self.base_url!r} is not an http(s) URL")
        try:
            _, writer = await asyncio.wait_for(
                asyncio.open_connection(host, port), self._timeout.sock_connect
            )
        except socket.gaierror as e:
            raise EndpointUnreachableError(
                f"cannot resolve the host of {self.base_url} ({host}: {e.strerror})"
            ) from None
        except TimeoutError:
            return []
        except OSError as e:
            if _refused(e):
                raise EndpointUnreachableError(
                    f"connection refused at {self.base_url} (nothing listens on {host}:{port})"
                ) from None
            if e.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH):
                raise EndpointUnreachableError(
                    f"cannot reach {self.base_url} ({host}:{port}: {e.strerror})"
                ) from None
            return []
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
        return []

    def build_body(
        self,
        messages: Messages,
        model: str,
        tools: Sequence[dict[str, Any]] | None,
        sampling_args: SamplingArgs | None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"model": model, "messages": messages}
        if tools:
            body["tools"] = [to_openai_tool(t) for t in tools]
        if sampling_args:
            for key, value in sampling_args.items():
                if value is None or key == "n":
                    continue
                if key == "extra_body":
                    if value:  # (usually empty: no comprehension's frame then)
                        body.update({k: v for k, v in value.items() if v is not None})
                elif key == "max_tokens" and self._rename_max_tokens:
                    body["max_completion_tokens"] = value
                else:
                    body[key] = value
        return body

    async def get_response(
        self,
        messages: Messages,
        model: str,
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        sampling_args: SamplingArgs | None = None,
    ) -> ModelResponse:
        body = self.build_body(messages, model, tools, sampling_args)
        try:
            payload = orjson.dumps(body, default=json_default)
        except TypeError as e:
            raise ModelError(f"request body is not JSON-serialisable: {e}") from e
        data = await self._post(payload)
        return parse_chat_completion(data)

    def build_text_body(
        self, prompt: str, model: str, sampling_args: SamplingArgs | None
    ) -> dict[str, Any]:
        """A `/v1/completions` body. Chat-only names are translated: `max_completion_tokens`
        is `max_tokens` there, and `logprobs` is a count (True asks for the sampled tokens')."""
        body: dict[str, Any] = {"model": model, "prompt": prompt}
        args = sampling_args or {}
        for key, value in args.items():
            if value is None or key in ("n", "top_logprobs"):
                continue
            if key == "extra_body":
                body.update({k: v for k, v in value.items() if v is not None})
            elif key == "max_completion_tokens":
                body["max_tokens"] = value
            elif key == "logprobs" and isinstance(value, bool):
                if value:
                    body["logprobs"] = max(1, int(args.get("top_logprobs") or 0))
            else:
                body[key] = value
        return body

    async def get_text_response(
        self, prompt: str, model: str, *, sampling_args: SamplingArgs | None = None
    ) -> ModelResponse:
        if not isinstance(prompt, str):
            raise ConfigError(
                f"a text completion needs a string prompt, got {type(prompt).__name__}"
            )
        body = self.build_text_body(prompt, model, sampling_args)
        try:
            payload = orjson.dumps(body, default=json_default)
        except TypeError as e:
            raise ModelError(f"request body is not JSON-serialisable: {e}") from e
        return parse_text_completion(await self._post(payload, self._text_url))

    async def _post(self, payload: bytes, url: str | None = None) -> Any:
        """POST to `url` (default: chat completions) with retries; the parsed JSON reply."""
        url = url or self._url
        session = self._live_session() or await self._session()
        last_problem = "no attempt made"
        for attempt in range(self.max_retries + 1):
            retry_after: float | None = None
            try:
                async with session.post(url, data=payload) as resp:
                    raw = await resp.read()
                    status = resp.status
                    if status == 200:
                        try:
                            data = orjson.loads(raw)
                        except orjson.JSONDecodeError as e:
                            raise InvalidModelResponseError(
                                f"reply is not JSON ({e}): {raw[:200]!r}"
                            ) from None
                        version = resp.headers.get(POLICY_VERSION_HEADER)
                        if version is not None and isinstance(data, dict):
                            data.setdefault("policy_version", version)
                        return data
                    detail = _error_detail(raw)
                    if status not in RETRY_STATUSES:
                        if status in (400, 413) and any(
                            m in detail.lower() for m in _CONTEXT_ERROR_MARKERS
                        ):
                            raise OverlongPromptError(f"HTTP {status}: {detail}")
                        if status == 404:  # e.g. a hub or web app at the URL, not a model
                            # (the "HTTP 404" head is what TokenInClient's fallback looks for)
                            path = url.removeprefix(self.base_url) or url
                            raise ModelError(
                                f"HTTP 404 from {url}: {detail}. The endpoint at "
                                f"{self.base_url} has no {path}: is it an OpenAI-compatible "
                                "model server?"
                            )
                        raise ModelError(f"HTTP {status} from {url}: {detail}")
                    last_problem = f"HTTP {status}: {detail}"
                    retry_after = _retry_after(resp.headers.get("retry-after"))
            except aiohttp.ClientConnectorError as e:
                if _refused(e):  # nothing listens: retrying would only make the user wait
                    raise EndpointUnreachableError(
                        f"connection refused at {self.base_url} (nothing listens on "
                        f"{e.host}:{e.port})"
                    ) from None
                last_problem = f"{type(e).__name__}: {e}"
            except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as e:
                last_problem = f"{type(e).__name__}: {e}"
            except TimeoutError:
                last_problem = f"no reply within {self._timeout.total:g}s"
            if attempt < self.max_retries:
                delay = min(self.retry_max_delay, self.retry_base_delay * (2**attempt))
                delay = delay * (0.5 + random.random() / 2)
                if retry_after is not None:
                    delay = min(max(delay, retry_after), self.retry_max_delay)
                logger.debug(
                    "retrying %s in %.2fs (attempt %d of %d): %s",
                    url, delay, attempt + 2, self.max_retries + 1, last_problem,
                )  # fmt: skip
                await asyncio.sleep(delay)
        raise ModelConnectionError(
            f"{url} failed after {self.max_retries + 1} attempts; last: {last_problem}"
        )


def _error_detail(raw: bytes) -> str:
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return raw[:300].decode("utf-8", "replace")
    err = data.get("error") if isinstance(data, dict) else None
    if isinstance(err, dict) and err.get("message"):
        return str(err["message"])[:300]
    if isinstance(data, dict) and data.get("detail"):
        return str(data["detail"])[:300]
    return raw[:300].decode("utf-8", "replace")


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


class OpenAICompletionsClient(OpenAIClient):
    """Upstream 0.3's completions client: a chat prompt's message texts joined by blank lines,
    sent to `/v1/completions`; the continuation comes back as the assistant message. (A
    `message_type="completion"` environment sends its text prompt as it is, on any client.)"""

    async def get_response(
        self,
        messages: Messages,
        model: str,
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        sampling_args: SamplingArgs | None = None,
    ) -> ModelResponse:
        if tools:
            raise ConfigError("the completions API has no tools: use a chat completions client")
        if isinstance(messages, str):
            prompt = messages
        else:
            prompt = "\n\n".join(_message_text(m) for m in messages)
        return await self.get_text_response(prompt, model, sampling_args=sampling_args)


def _message_text(message: Any) -> str:
    content = message.get("content") if isinstance(message, dict) else message
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for part in content:
        if not isinstance(part, dict) or part.get("type") != "text":
            raise ConfigError("the completions API takes text only (no images or audio)")
        parts.append(part.get("text") or "")
    return " ".join(parts)
