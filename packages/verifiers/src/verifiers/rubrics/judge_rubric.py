"""JudgeRubric: score rollouts by asking another model (an "LLM judge").

Classic contract: the rubric registers no reward function; the user adds one that awaits the
injected `judge(prompt, completion, answer, state)` coroutine and turns its text verdict into a
number. What differs from the classic implementation:

* the judge goes through `vf.OpenAIClient` (retries with backoff on 429/5xx/timeouts, a request
  timeout) under the rubric's own concurrency cap;
* constructing needs no API key: without a client, `judge_client` is a real `AsyncOpenAI` from
  `OPENAI_BASE_URL` / `OPENAI_API_KEY` built once a key is known (upstream built it eagerly
  and failed without one), and requests go through our client for the same endpoint;
* `judge` accepts extra keyword arguments (callers pass their `**kwargs` through) and, called
  from a sync reward function, returns the verdict itself (0.1.2's sync `judge`);
* the prompt is rendered without `str.format`, so braces in questions and answers are safe,
  and a multimodal question contributes its text parts (upstream: the list's repr);
* a judge that cannot answer raises `JudgeError` (an `InfraError`), so the rollout is recorded
  as errored with reward NaN and `infra: True` instead of a silent 0.0;
* the judge's token usage is added to the rollout's `usage` (`judge_input_tokens`,
  `judge_output_tokens`), which the output carries as `token_usage`.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import re
from typing import Any

import aiohttp

from verifiers.client import Client, OpenAIClient, resolve_client
from verifiers.errors import ConfigError, InfraError, MissingKeyError, ModelError
from verifiers.openai_sdk import is_openai_client
from verifiers.parsers.parser import content_text
from verifiers.rubrics.rubric import Rubric
from verifiers.types import Messages, SamplingArgs
from verifiers.utils.shared import SharedTasks
from verifiers.wrapped_client import WrappedClient

__all__ = ["DEFAULT_JUDGE_PROMPT", "JudgeError", "JudgeRubric"]

DEFAULT_JUDGE_PROMPT = """Given a ground truth answer \
and a response, determine if the response is correct.

Question:
```
{question}
```

Ground truth answer:
```
{answer}
```

Response:
```
{response}
```

Respond either "yes" or "no" only."""

# One pass over the template: `{{`/`}}` unescape as `str.format` would (classic templates were
# written for it), the three placeholders are filled, and every other brace is left alone, so
# braces in questions, answers and responses (JSON, LaTeX, code) never break rendering and a
# substituted text is never substituted into again.
_TEMPLATE_RE = re.compile(r"\{\{|\}\}|\{(question|answer|response)\}")
_OPENAI_API = "api.openai.com"
FAILURES_KEY = "judge_failures"  # rendered prompt -> the JudgeError it ended with


class JudgeError(InfraError, RuntimeError):
    """The judge model could not produce a verdict (unreachable after retries, or a bad reply).

    An `InfraError`: the rollout is masked as an infrastructure failure, not scored 0. Also a
    `RuntimeError`, which is what upstream raises for a failed judge call."""


def _default_endpoint() -> tuple[str, str | None]:
    return os.environ.get("OPENAI_BASE_URL") or f"https://{_OPENAI_API}/v1", os.environ.get(
        "OPENAI_API_KEY"
    )


def _missing_key_error() -> MissingKeyError:
    return MissingKeyError(
        "JudgeRubric has no judge_client and OPENAI_API_KEY is not set; set it, or "
        "pass judge_client (an AsyncOpenAI, a vf.Client or a base URL)"
    )


class _NoKeyClient:
    """Stands in for the default `AsyncOpenAI` while no key is known: using it says why.

    Upstream built `AsyncOpenAI()` eagerly and so failed at construction without a key;
    here construction works and the first use reports the missing key."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise _missing_key_error()

    def __repr__(self) -> str:
        return "<JudgeRubric default judge client: OPENAI_API_KEY not set>"


class _EnvOpenAIClient(WrappedClient):
    """An `OpenAIClient` built on first use from `OPENAI_BASE_URL` / `OPENAI_API_KEY`.

    Deferred so that building an environment needs no key (classic built `AsyncOpenAI()`
    eagerly and failed without `OPENAI_API_KEY`)."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._client: OpenAIClient | None = None

    def __repr__(self) -> str:
        return f"_EnvOpenAIClient({self._client!r})"

    @property
    def client(self) -> OpenAIClient:
        if self._client is None:
            base_url, api_key = _default_endpoint()
            if not api_key and _OPENAI_API in base_url:
                raise _missing_key_error()
            self._client = OpenAIClient(base_url, api_key=api_key or "EMPTY", **self._options)
        return self._client

    @property
    def base_url(self) -> str:  # type: ignore[override]
        return self._client.base_url if self._client is not None else ""

    def wrapped(self) -> Client:
        return self.client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()


class JudgeRubric(Rubric):
    """A rubric whose reward functions can ask a judge model about the response.

    ```python
    rubric = vf.JudgeRubric(judge_client=AsyncOpenAI(...), judge_model="gpt-4.1-mini")

    async def correct(judge, prompt, completion, answer, state) -> float:
        verdict = await judge(prompt, completion, answer, state)
        return 1.0 if "yes" in verdict.lower() else 0.0

    rubric.add_reward_func(correct)
    ```

    `judge_client`: an `openai.AsyncOpenAI` (or `OpenAI`), a `vf.Client` (used as is, never
    closed here), a base URL, a `vf.ClientConfig`, any object with an openai-style
    `chat.completions.create` (called as is, as upstream does), or None. With None,
    `self.judge_client` is, as upstream, a real `openai.AsyncOpenAI` configured from
    `OPENAI_BASE_URL` / `OPENAI_API_KEY` (built once a key is known, so constructing needs
    none). Instead of a client, `judge_base_url` and/or `judge_api_key_var` (the name of the
    variable holding the key, which must then be set) name the endpoint, the other part coming
    from `OPENAI_BASE_URL` / `OPENAI_API_KEY`; `self.judge_client` is then an `AsyncOpenAI` for
    that endpoint. The 0.1.2 spellings `client=` / `model=` are taken for `judge_client` /
    `judge_model`. `judge_max_retries` and `judge_timeout` (seconds per request) apply to
    clients the rubric builds; `judge_max_concurrent` caps requests in flight (<= 0: no cap).
    """

    def __init__(
        self,
        parser: Any = None,
        parallelize_scoring: bool = False,
        judge_client: Any = None,
        judge_model: str = "gpt-4.1-nano",
        judge_sampling_args: SamplingArgs | None = None,
        judge_prompt: str = DEFAULT_JUDGE_PROMPT,
        *,
        judge_max_retries: int = 5,
        judge_timeout: float = 300.0,
        judge_max_concurrent: int = 32,
        judge_base_url: str | None = None,
        judge_api_key_var: str | None = None,
        client: Any = None,
        model: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(parser=parser, parallelize_scoring=parallelize_scoring, **kwargs)
        # 0.1.2 passed `client` / `model` through to Rubric, which set them as attributes (and
        # then ignored them); they name the judge, so here they are also used as such.
        if client is not None or model is not None:
            self.client, self.model = client, model
        if judge_client is None and client is not None:
            judge_client = client
        if judge_model == "gpt-4.1-nano" and model is not None:
            judge_model = model
        self.judge_max_retries = judge_max_retries
        self.judge_timeout = judge_timeout
        self._built_openai: Any = None  # an AsyncOpenAI the rubric built (closed on teardown)
        self._no_key = _NoKeyClient()
        if judge_base_url is not None or judge_api_key_var is not None:
            if judge_client is not None:
                raise ConfigError(
                    "pass judge_client or judge_base_url / judge_api_key_var, not both"
                )
            judge_client = self._built_openai = self._openai_for(judge_base_url, judge_api_key_var)
        self.judge_model = judge_model
        self.judge_sampling_args: SamplingArgs = dict(judge_sampling_args or {})
        self.judge_prompt = judge_prompt
        self.judge_max_concurrent = judge_max_concurrent
        # The concurrency cap per event loop (asyncio primitives are bound to one loop).
        self._caps: dict[asyncio.AbstractEventLoop, asyncio.Semaphore | None] = {}
        # Verdicts being fetched, so reward functions of one rollout that run concurrently
        # share one request: (id(state), rendered prompt) -> task.
        self._pending: SharedTasks[str] = SharedTasks()
        self._scoring_loop: asyncio.AbstractEventLoop | None = None
        self.judge_client = judge_client  # the property resolves it (without any I/O)
        self.class_objects.update(
            judge=self.judge,
            judge_model=self.judge_model,
            judge_prompt=self.judge_prompt,
            judge_sampling_args=self.judge_sampling_args,
        )

    # -- the client -----------------------------------------------------------------------
    def _openai_for(self, base_url: str | None, api_key_var: str | None) -> Any:
        """An `AsyncOpenAI` for an endpoint named by URL and/or key variable."""
        if api_key_var is not None and not os.environ.get(api_key_var):
            # Named explicitly, so a missing key is a mistake to report now, not at the first
            # verdict.
            raise MissingKeyError(f"judge_api_key_var {api_key_var!r}: that variable is not set")
        default_url, default_key = _default_endpoint()
        api_key = os.environ[api_key_var] if api_key_var is not None else default_key
        import openai  # on first use (see verifiers.openai_sdk)

        return openai.AsyncOpenAI(
            base_url=base_url or default_url,
            api_key=api_key or "EMPTY",
            max_retries=self.judge_max_retries,
            timeout=self.judge_timeout,
        )

    @property
    def judge_client(self) -> Any:
        """The client as given (an `AsyncOpenAI` stays one, for classic code that calls
        `judge_client.chat.completions.create` / `.parse`); with none given, an `AsyncOpenAI`
        from `OPENAI_BASE_URL` / `OPENAI_API_KEY` (a stand-in that reports the missing key
        until one is set)."""
        if self._judge_client_arg is not None:
            return self._judge_client_arg
        if self._built_openai is None:
            base_url, api_key = _default_endpoint()
            if not api_key and _OPENAI_API in base_url:
                return self._no_key
            self._built_openai = self._openai_for(None, None)
            self.class_objects["judge_client"] = self._built_openai
        return self._built_openai

    @judge_client.setter
    def judge_client(self, value: Any) -> None:
        self._judge_client_arg = value
        self._client, self._owned, self._direct = self._resolve(value)
        self._caps.clear()
        self.class_objects["judge_client"] = self.judge_client

    def _resolve(self, value: Any) -> tuple[Client | None, bool, Any]:
        """`(client, owned, direct)`: the SDK client requests go through, or (`None`, False,
        the object) for a client-like object that is called as is."""
        options: dict[str, Any] = {
            "timeout": self.judge_timeout,
            "max_retries": self.judge_max_retries,
        }
        if value is None:
            return _EnvOpenAIClient(**options), True, None
        if isinstance(value, Client):
            return value, False, None
        if isinstance(value, str) or is_openai_client(value):
            # A URL or an openai SDK client: our own client (retries, timeout, pooled HTTP),
            # configured from it; the SDK object itself stays what `judge_client` returns.
            return OpenAIClient(value, **options), True, None
        completions = getattr(getattr(value, "chat", None), "completions", None)
        if callable(getattr(completions, "create", None)):
            return None, False, value
        client, owned = resolve_client(value)  # ClientConfig, config dict, list of endpoints
        return client, owned, None

    def available_for(self, state: Any, *, input: Any = None, **fields: Any) -> dict[str, Any]:
        # Scoring runs on the event loop: remember it, so a sync reward function (in a worker
        # thread) calling `judge(...)` the 0.1.2 way can have the verdict fetched there.
        try:
            self._scoring_loop = asyncio.get_running_loop()
        except RuntimeError:
            pass
        if isinstance(self.class_objects.get("judge_client"), _NoKeyClient):
            self.class_objects["judge_client"] = self.judge_client  # a key may be set by now
        return super().available_for(state, input=input, **fields)

    # -- judging --------------------------------------------------------------------------
    def render_judge_prompt(self, prompt: Any, completion: Any, answer: Any) -> str:
        """The judge prompt for one rollout: question = the last prompt message's text,
        response = `parser.parse_answer(completion)`."""
        if isinstance(prompt, list):
            question = content_text(prompt[-1]) if prompt else ""
        else:
            question = "" if prompt is None else str(prompt)
        response = self.parser.parse_answer(completion)
        values = {
            "question": question,
            "answer": "" if answer is None else str(answer),
            "response": "" if response is None else str(response),
        }

        def fill(m: re.Match[str]) -> str:
            token = m.group(0)
            if token == "{{":
                return "{"
            if token == "}}":
                return "}"
            return values[m.group(1)]

        return _TEMPLATE_RE.sub(fill, self.judge_prompt)

    def judge(
        self,
        prompt: Any,
        completion: Any,
        answer: Any,
        state: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        """The judge model's raw reply for this rollout (await it); cached per rendered prompt
        in `state["judge_response"]`. Raises `JudgeError` when the judge cannot answer.

        Called from a sync reward function (a worker thread, no event loop), as 0.1.2's sync
        `judge` was, it returns the reply itself, fetched on the scoring loop."""
        coro = self._judge(prompt, completion, answer, state)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            loop = self._scoring_loop
            if loop is not None and loop.is_running():
                return asyncio.run_coroutine_threadsafe(coro, loop).result()
            return asyncio.run(coro)
        return coro

    async def _judge(self, prompt: Any, completion: Any, answer: Any, state: Any) -> str:
        rendered = self.render_judge_prompt(prompt, completion, answer)
        if state is None:
            return await self._ask(rendered, None)
        cache = state.get("judge_response")
        if isinstance(cache, dict) and rendered in cache:
            return cache[rendered]
        # A judge that already failed for this prompt after its retries is not asked again by
        # the rollout's later reward functions (they run one after the other, as upstream).
        failed = state.get(FAILURES_KEY)
        if isinstance(failed, dict) and rendered in failed:
            raise failed[rendered]
        try:
            # (id(state), prompt): reward functions of one rollout share one request.
            return await self._pending.run(
                (id(state), rendered), lambda: self._ask(rendered, state)
            )
        except JudgeError as e:
            if not isinstance(failed, dict):
                failed = state[FAILURES_KEY] = {}
            failed[rendered] = e
            raise

    async def _ask(self, rendered: str, state: dict[str, Any] | None) -> str:
        cap = self._cap()
        messages: Messages = [{"role": "user", "content": rendered}]
        if cap is None:
            verdict, usage = await self._request(messages)
        else:
            async with cap:
                verdict, usage = await self._request(messages)
        if state is not None:
            _add_usage(state, usage)
            cache = state.get("judge_response")
            if not isinstance(cache, dict):
                cache = state["judge_response"] = {}
            cache[rendered] = verdict
        return verdict

    async def _request(self, messages: Messages) -> tuple[str, dict[str, int]]:
        if self._direct is not None:
            return await self._request_direct(messages)
        assert self._client is not None
        try:
            response = await self._client.get_response(
                messages, self.judge_model, sampling_args=self.judge_sampling_args or None
            )
        except (ModelError, aiohttp.ClientError) as e:
            where = self._client.base_url or "the judge endpoint"
            raise JudgeError(
                f"judge {self.judge_model!r} at {where} gave no verdict: {type(e).__name__}: {e}"
            ) from e
        return response.message.get("content") or "", response.usage

    async def _request_direct(self, messages: Messages) -> tuple[str, dict[str, int]]:
        """Upstream's call on a client-like object: `chat.completions.create(model=...,
        messages=..., **sampling args)`, max_tokens sent as max_completion_tokens."""
        args = dict(self.judge_sampling_args)
        if "max_tokens" in args:
            args["max_completion_tokens"] = args.pop("max_tokens")
        args = {k: v for k, v in args.items() if v is not None}
        try:
            response = self._direct.chat.completions.create(
                model=self.judge_model, messages=messages, **args
            )
            if inspect.isawaitable(response):
                response = await response
            content = response.choices[0].message.content
        except Exception as e:
            raise JudgeError(
                f"judge {self.judge_model!r} gave no verdict: {type(e).__name__}: {e}"
            ) from e
        usage = getattr(response, "usage", None)
        return str(content), {
            "input_tokens": getattr(usage, "prompt_tokens", 0) or 0,
            "output_tokens": getattr(usage, "completion_tokens", 0) or 0,
        }

    def _cap(self) -> asyncio.Semaphore | None:
        loop = asyncio.get_running_loop()
        if loop not in self._caps:
            for old in [lp for lp in self._caps if lp.is_closed()]:
                del self._caps[old]
            limit = self.judge_max_concurrent
            self._caps[loop] = asyncio.Semaphore(limit) if limit and limit > 0 else None
        return self._caps[loop]

    # -- lifecycle ------------------------------------------------------------------------
    async def teardown(self) -> None:
        """Close the judge client if the rubric built it (a client passed in is the caller's)."""
        await super().teardown()
        if self._owned and self._client is not None:
            await self._client.aclose()
        built, self._built_openai = self._built_openai, None
        if built is not None:
            await built.close()


def _add_usage(state: dict[str, Any], usage: dict[str, int]) -> None:
    totals = state.get("usage")
    if not isinstance(totals, dict):
        totals = state["usage"] = {}
    totals["judge_input_tokens"] = totals.get("judge_input_tokens", 0) + usage.get(
        "input_tokens", 0
    )
    totals["judge_output_tokens"] = totals.get("judge_output_tokens", 0) + usage.get(
        "output_tokens", 0
    )
