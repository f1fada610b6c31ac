"""A scripted OpenAI-compatible HTTP server (aiohttp + orjson) for tests and benchmarks.

Endpoints: ``POST /v1/chat/completions`` (JSON or SSE), ``POST /v1/completions``,
``GET /v1/models`` (the ``/v1`` prefix is optional). Token ids, logprobs and usage come from the
byte-level tokenizer in :mod:`verifiers.testing.tokenizer`, with vLLM's extra fields
(``return_token_ids``, ``return_tokens_as_token_ids``) and its ``POST /tokenize``. Like
prime-rl's vLLM server it also serves ``POST /v1/chat/completions/tokens`` (a chat completion
whose prompt ids are the body's ``tokens``) and the weight-update endpoints emulated in
:mod:`verifiers.testing.weights` (``/update_weights``, ``/reload_weights``,
``/init_broadcaster``, ``/pause``, ``/resume``, ``GET /health``).
"""

from __future__ import annotations

from typing import Any

from verifiers.testing.faults import Fault, FaultScript
from verifiers.testing.recording import RequestLog
from verifiers.testing.responders import ArithmeticResponder, Responder
from verifiers.testing.routes import OpenAIRoutes
from verifiers.testing.serving import BackgroundLoop, LoopSite
from verifiers.testing.weights import WeightState

__all__ = ["Fault", "ScriptedServer"]


class ScriptedServer:
    """An OpenAI-compatible server on loopback driven by a responder.

    Use ``with ScriptedServer() as srv:`` (background thread with its own event loop) or
    ``start()``/``stop()``; inside a running loop ``async with`` / ``astart()``/``astop()``
    serve on that loop instead. ``srv.base_url`` is ``http://HOST:PORT/v1``.
    ``srv.requests`` holds received POST bodies (the newest ``max_recorded``; ``clear()`` empties
    it), ``srv.request_count`` counts every POST, and ``srv.responses`` holds the bodies of the
    non-streamed chat completions sent back (same bound). ``drop_past_reasoning`` renders
    prompts without the reasoning of assistant turns before the last user message (like
    Qwen3's template). ``srv.weights`` (a :class:`~verifiers.testing.weights.WeightState`)
    holds the emulated weights' version, starting at ``policy_version``, and the admin calls;
    with ``report_policy_version`` every reply carries that version in the
    ``X-Policy-Version`` header (real vLLM and prime-rl servers send no such header).
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        latency_ms: float = 0.0,
        faults: list[Fault] | None = None,
        fail_rate: float = 0.0,
        seed: int = 0,
        model: str = "mock-model",
        max_recorded: int = 10_000,
        stream_chunk_tokens: int = 16,
        drop_past_reasoning: bool = False,
        policy_version: int = 0,
        report_policy_version: bool = False,
    ) -> None:
        self.responder: Responder = responder if responder is not None else ArithmeticResponder()
        self.host = host
        self.port = port
        self.latency_ms = latency_ms
        self.model = model
        self.stream_chunk_tokens = max(1, stream_chunk_tokens)
        self.drop_past_reasoning = drop_past_reasoning
        self.weights = WeightState(policy_version)
        self.report_policy_version = report_policy_version
        # The parts, one job each: what was seen, what fails, the routes, serving.
        self._log = RequestLog(max_recorded)
        self._faults = FaultScript(list(faults or []))
        if fail_rate > 0:
            self.add_fault(Fault(status=500, times=None, rate=fail_rate, seed=seed))
        self._routes = OpenAIRoutes(self, self._log, self._faults)
        self._site = LoopSite(self._routes.dispatch)
        self._background = BackgroundLoop("ScriptedServer")

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    # ------------------------------------------------------------------ recording
    @property
    def requests(self) -> list[dict[str, Any]]:
        return self._log.requests

    @property
    def responses(self) -> list[dict[str, Any]]:
        return self._log.responses

    @property
    def request_count(self) -> int:
        return self._log.request_count

    @property
    def max_recorded(self) -> int:
        return self._log.max_recorded

    @max_recorded.setter
    def max_recorded(self, value: int) -> None:
        self._log.max_recorded = value

    def clear(self) -> None:
        """Forget recorded requests and reset ``request_count``."""
        self._log.clear()

    # ------------------------------------------------------------------ faults
    @property
    def faults(self) -> list[Fault]:
        return self._faults.faults

    def set_faults(self, faults: list[Fault]) -> None:
        """Replace the faults (their fire counts start at zero)."""
        self._faults.set(faults)

    def add_fault(self, fault: Fault) -> None:
        self._faults.add(fault)

    # ------------------------------------------------------------------ lifecycle
    async def astart(self) -> ScriptedServer:
        """Start serving on the running event loop."""
        self.port = await self._site.start(self.host, self.port)
        return self

    async def astop(self) -> None:
        await self._site.stop()

    def start(self) -> ScriptedServer:
        """Serve from a background thread with its own event loop; returns once listening."""
        self._background.start(self.astart, self.astop)
        return self

    def stop(self) -> None:
        self._background.stop()

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> ScriptedServer:
        return await self.astart()

    async def __aexit__(self, *exc: object) -> None:
        await self.astop()
