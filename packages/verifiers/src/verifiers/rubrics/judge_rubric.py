"""JudgeRubric: score rollouts by asking another model (an "LLM judge").

Classic contract: the rubric registers no reward function; the user adds one that awaits the
injected `judge(prompt, completion, answer, state)` coroutine and turns its text verdict into a
number. What differs from the classic implementation:

* the judge goes through `vf.OpenAIClient` (retries with backoff on 429/5xx/timeouts, a request
  timeout) under the rubric's own concurrency cap;
* constructing needs no API key: without a client, one is built on first use from
  `OPENAI_BASE_URL` / `OPENAI_API_KEY`;
* a judge that cannot answer raises `JudgeError` (an `InfraError`), so the rollout is recorded
  as errored with reward NaN and `infra: True` instead of a silent 0.0;
* the judge's token usage is added to the rollout's `usage` (`judge_input_tokens`,
  `judge_output_tokens`), which the output carries as `token_usage`.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Sequence
from typing import Any

import aiohttp

from verifiers.client import Client, ClientConfig, ModelResponse, OpenAIClient, resolve_client
from verifiers.errors import ConfigError, InfraError, MissingKeyError, ModelError
from verifiers.parsers.parser import content_text
from verifiers.rubrics.rubric import Rubric
from verifiers.types import Messages, SamplingArgs
from verifiers.utils.shared import SharedTasks

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


class JudgeError(InfraError):
    """The judge model could not produce a verdict (unreachable after retries, or a bad reply).

    An `InfraError`: the rollout is masked as an infrastructure failure, not scored 0."""


class _EnvOpenAIClient(Client):
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
            base_url = os.environ.get("OPENAI_BASE_URL") or f"https://{_OPENAI_API}/v1"
            api_key = os.environ.get("OPENAI_API_KEY")
            if not api_key and _OPENAI_API in base_url:
                raise MissingKeyError(
                    "JudgeRubric has no judge_client and OPENAI_API_KEY is not set; set it, or "
                    "pass judge_client (an AsyncOpenAI, a vf.Client or a base URL)"
                )
            self._client = OpenAIClient(base_url, api_key=api_key or "EMPTY", **self._options)
        return self._client

    @property
    def base_url(self) -> str:  # type: ignore[override]
        return self._client.base_url if self._client is not None else ""

    async def get_response(
        self,
        messages: Messages,
        model: str,
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        sampling_args: SamplingArgs | None = None,
    ) -> ModelResponse:
        return await self.client.get_response(
            messages, model, tools=tools, sampling_args=sampling_args
        )

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()


def _endpoint_config(
    base_url: str | None, api_key_var: str | None, timeout: float, max_retries: int
) -> ClientConfig:
    if api_key_var is not None and not os.environ.get(api_key_var):
        # Named explicitly, so a missing key is a mistake to report now, not at the first verdict.
        raise MissingKeyError(f"judge_api_key_var {api_key_var!r}: that variable is not set")
    return ClientConfig(
        api_base_url=base_url or os.environ.get("OPENAI_BASE_URL") or f"https://{_OPENAI_API}/v1",
        api_key_var=api_key_var or "OPENAI_API_KEY",
        timeout=timeout,
        max_retries=max_retries,
    )


class JudgeRubric(Rubric):
    """A rubric whose reward functions can ask a judge model about the response.

    ```python
    rubric = vf.JudgeRubric(judge_client=AsyncOpenAI(...), judge_model="gpt-4.1-mini")

    async def correct(judge, prompt, completion, answer, state) -> float:
        verdict = await judge(prompt, completion, answer, state)
        return 1.0 if "yes" in verdict.lower() else 0.0

    rubric.add_reward_func(correct)
    ```

    `judge_client`: an `openai.AsyncOpenAI`, a `vf.Client` (used as is, never closed here), a
    base URL, a `vf.ClientConfig`, or None (built on first use from `OPENAI_BASE_URL` /
    `OPENAI_API_KEY`). Instead of a client, `judge_base_url` and/or `judge_api_key_var` (the
    name of the variable holding the key, which must then be set) name the endpoint; the one
    not given comes from `OPENAI_BASE_URL` / `OPENAI_API_KEY`. `judge_max_retries` and
    `judge_timeout` (seconds per request) apply to clients the rubric builds;
    `judge_max_concurrent` caps requests in flight (<= 0: no cap).
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
        **kwargs: Any,
    ) -> None:
        super().__init__(parser=parser, parallelize_scoring=parallelize_scoring, **kwargs)
        if judge_base_url is not None or judge_api_key_var is not None:
            if judge_client is not None:
                raise ConfigError(
                    "pass judge_client or judge_base_url / judge_api_key_var, not both"
                )
            judge_client = _endpoint_config(
                judge_base_url, judge_api_key_var, judge_timeout, judge_max_retries
            )
        self.judge_model = judge_model
        self.judge_sampling_args: SamplingArgs = dict(judge_sampling_args or {})
        self.judge_prompt = judge_prompt
        self.judge_max_retries = judge_max_retries
        self.judge_timeout = judge_timeout
        self.judge_max_concurrent = judge_max_concurrent
        # The concurrency cap per event loop (asyncio primitives are bound to one loop).
        self._caps: dict[asyncio.AbstractEventLoop, asyncio.Semaphore | None] = {}
        # Verdicts being fetched, so reward functions of one rollout that run concurrently
        # share one request: (id(state), rendered prompt) -> task.
        self._pending: SharedTasks[str] = SharedTasks()
        self.judge_client = judge_client  # the property resolves it (without any I/O)
        self.class_objects.update(
            judge=self.judge,
            judge_model=self.judge_model,
            judge_prompt=self.judge_prompt,
            judge_sampling_args=self.judge_sampling_args,
        )

    # -- the client -----------------------------------------------------------------------
    @property
    def judge_client(self) -> Any:
        """The client as given (an `AsyncOpenAI` stays one, for classic code that calls
        `judge_client.chat.completions.create`); with none given, the env-configured client."""
        return self._judge_client_arg if self._judge_client_arg is not None else self._client

    @judge_client.setter
    def judge_client(self, value: Any) -> None:
        self._judge_client_arg = value
        self._client, self._owned = self._resolve(value)
        self._caps.clear()
        self.class_objects["judge_client"] = self.judge_client

    def _resolve(self, value: Any) -> tuple[Client, bool]:
        options = {"timeout": self.judge_timeout, "max_retries": self.judge_max_retries}
        if value is None:
            return _EnvOpenAIClient(**options), True
        if isinstance(value, Client):
            return value, False
        if isinstance(value, str) or (hasattr(value, "base_url") and hasattr(value, "chat")):
            # A URL or an openai SDK client: our own client, configured from it.
            return OpenAIClient(value, **options), True
        return resolve_client(value)  # ClientConfig, config dict, list of endpoints

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

    async def judge(
        self,
        prompt: Any,
        completion: Any,
        answer: Any,
        state: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> str:
        """The judge model's raw reply for this rollout; cached per rendered prompt in
        `state["judge_response"]`. Raises `JudgeError` when the judge cannot answer."""
        rendered = self.render_judge_prompt(prompt, completion, answer)
        if state is None:
            return await self._ask(rendered, None)
        cache = state.get("judge_response")
        if isinstance(cache, dict) and rendered in cache:
            return cache[rendered]
        # (id(state), prompt): reward functions of one rollout share one request.
        return await self._pending.run((id(state), rendered), lambda: self._ask(rendered, state))

    async def _ask(self, rendered: str, state: dict[str, Any] | None) -> str:
        cap = self._cap()
        messages: Messages = [{"role": "user", "content": rendered}]
        try:
            if cap is None:
                response = await self._request(messages)
            else:
                async with cap:
                    response = await self._request(messages)
        except (ModelError, aiohttp.ClientError) as e:
            where = self._client.base_url or "the judge endpoint"
            raise JudgeError(
                f"judge {self.judge_model!r} at {where} gave no verdict: {type(e).__name__}: {e}"
            ) from e
        verdict = response.message.get("content") or ""
        if state is not None:
            _add_usage(state, response.usage)
            cache = state.get("judge_response")
            if not isinstance(cache, dict):
                cache = state["judge_response"] = {}
            cache[rendered] = verdict
        return verdict

    async def _request(self, messages: Messages) -> ModelResponse:
        return await self._client.get_response(
            messages, self.judge_model, sampling_args=self.judge_sampling_args or None
        )

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
        if self._owned:
            await self._client.aclose()


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
