"""Environment: a dataset, a way to roll out a model on it, and a rubric to score the result."""

from __future__ import annotations

import asyncio
import inspect
import logging
import math
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, cast

from verifiers.client import Client, ModelResponse, merge_sampling_args, model_response
from verifiers.dataset import build_prompt, parse_info, with_system_prompt
from verifiers.decorators import discover_decorated
from verifiers.envs.classic_calls import ClassicCallsMixin, model_client
from verifiers.envs.completion_mode import check_message_type, text_prompt
from verifiers.envs.env_datasets import EnvDatasets
from verifiers.envs.failed_rollouts import failed_state, retryable
from verifiers.envs.forwarding import forward
from verifiers.envs.output_records import output_record
from verifiers.envs.tool_defs import OpenAITools, as_tools
from verifiers.envs.user_threads import UserThreads
from verifiers.errors import ConfigError
from verifiers.generation import rollout_gc, run_generation, run_group
from verifiers.results import parsed_answer
from verifiers.rubrics import Rubric, RubricGroup
from verifiers.rubrics.rubric import (
    apply_score,
    direct_scoring,
    note_scoring_time,
    set_advantages,
)
from verifiers.state import State, error_info, now, record_error
from verifiers.types import GenerateOutputs, Messages, RolloutOutput, SamplingArgs
from verifiers.utils.path_utils import get_results_path  # noqa: F401  (upstream 0.1.8 name)

logger = logging.getLogger("verifiers")

DEFAULT_SAMPLING_ARGS: SamplingArgs = {"n": 1, "extra_body": {}}


class Environment(ClassicCallsMixin):
    """Base class of every environment. Subclasses implement `rollout`.

    Its parts, each with one job: `datasets` (formatting and building the datasets),
    `threads` (worker threads for sync user code), the rubric (scoring) and
    `verifiers.generation` (running many rollouts); their classic method names stay on the
    environment (`get_dataset`, `run_sync`, `generate`, ...)."""

    #: Whether this environment's rollouts (and so its model calls) run in this process. A
    #: `verifiers.ray.RayEnvironment` runs them on cluster actors, so `RolloutStream` tags
    #: its calls from the records instead of wrapping the client.
    runs_in_process: bool = True

    oai_tools = OpenAITools()
    build_dataset = forward(EnvDatasets.build, "datasets")
    build_eval_dataset = forward(EnvDatasets.build_eval, "datasets")
    get_dataset = forward(EnvDatasets.get, "datasets")
    get_eval_dataset = forward(EnvDatasets.get_eval, "datasets")
    eval_inputs = forward(EnvDatasets.eval_inputs, "datasets")
    run_sync = forward(UserThreads.run_sync, "threads")

    def __init__(
        self,
        dataset: Any = None,
        eval_dataset: Any = None,
        system_prompt: str | None = None,
        few_shot: list[dict[str, Any]] | None = None,
        parser: Any = None,
        rubric: Rubric | None = None,
        sampling_args: SamplingArgs | None = None,
        message_type: str = "chat",
        tool_defs: list[dict[str, Any]] | None = None,
        oai_tools: list[dict[str, Any]] | None = None,
        max_workers: int = 512,
        env_id: str | None = None,
        env_args: dict[str, Any] | None = None,
        map_kwargs: dict[str, Any] | None = None,
        max_seq_len: int | None = None,
        score_rollouts: bool = True,
        pass_threshold: float = 0.5,
        **kwargs: Any,
    ) -> None:
        from verifiers.parsers import Parser

        self.datasets = EnvDatasets(self, dataset, eval_dataset)
        check_message_type(message_type, system_prompt, few_shot)
        self.system_prompt = system_prompt
        self.few_shot = few_shot
        self.map_kwargs = dict(map_kwargs or {})
        self.parser = parser if parser is not None else Parser()
        self.rubric: Rubric = rubric if rubric is not None else Rubric(parser=self.parser)
        self.message_type = message_type
        self.tool_defs = as_tools(tool_defs or oai_tools)
        self.max_workers = max_workers
        self.env_id = env_id or ""
        self.env_args = dict(env_args or {})
        self.max_seq_len = max_seq_len
        self.score_rollouts = score_rollouts
        self.pass_threshold = pass_threshold
        self.sampling_args: SamplingArgs = merge_sampling_args(
            DEFAULT_SAMPLING_ARGS, sampling_args or {}
        )
        self.logger = logger
        self.threads = UserThreads(self)
        # upstream's attribute: the `@vf.teardown` methods in priority order
        self._teardown_handlers = discover_decorated(self, "teardown")
        # Classic environments pass their own settings through **kwargs.
        for key, value in kwargs.items():
            setattr(self, key, value)
        self.dataset: Any = None
        self.eval_dataset: Any = None
        self.datasets.format_given()

    # -- configuration used by trainers ---------------------------------------------------
    def set_kwargs(self, **kwargs: Any) -> None:
        for key, value in kwargs.items():
            setter = getattr(self, f"set_{key}", None)
            if callable(setter):
                setter(value)
            else:
                setattr(self, key, value)

    def set_max_seq_len(self, max_seq_len: int | None) -> None:
        self.max_seq_len = max_seq_len

    def set_score_rollouts(self, score_rollouts: bool) -> None:
        self.score_rollouts = score_rollouts

    def set_concurrency(self, concurrency: int) -> None:
        self.max_workers = max(self.max_workers, concurrency)

    def add_rubric(self, rubric: Rubric) -> None:
        if isinstance(self.rubric, RubricGroup):
            self.rubric.rubrics.append(rubric)
        else:
            self.rubric = RubricGroup([self.rubric, rubric])

    def metric_names(self) -> list[str]:
        """Names of the metrics every output record of this environment carries."""
        return self.rubric.get_reward_func_names()

    @property
    def requires_group_rollouts(self) -> bool:
        return bool(self.rubric.has_group_funcs)

    @property
    def provides_advantages(self) -> bool:
        """Whether the rubric computes advantages itself (upstream 0.3's name)."""
        return bool(self.rubric.has_advantages)

    @property
    def executor(self) -> ThreadPoolExecutor:
        """The worker threads for sync user code (made on first use, shared with the rubric)."""
        return self.threads.executor()

    # -- one rollout ----------------------------------------------------------------------
    async def init_state(
        self,
        input: dict[str, Any],
        client: Client,
        model: str,
        sampling_args: SamplingArgs | None = None,
    ) -> State:
        """The initial state of a rollout of `input` (upstream's async hook: subclasses
        override it and call `await super().init_state(...)`)."""
        return self.new_state(input, client, model, sampling_args)

    def new_state(
        self,
        input: dict[str, Any],
        client: Client,
        model: str,
        sampling_args: SamplingArgs | None = None,
    ) -> State:
        prompt = input.get("prompt")
        text_mode = self.message_type == "completion"
        if text_mode:
            prompt = text_prompt(prompt if prompt is not None else input.get("question"))
        elif prompt is None:
            if "question" not in input:
                raise ConfigError("input has neither 'prompt' nor 'question'")
            prompt = build_prompt(input["question"], self.system_prompt, self.few_shot)
        elif isinstance(prompt, str):
            prompt = with_system_prompt(prompt, None)
        info = parse_info(input.get("info"))
        if client is not None and not isinstance(client, Client):
            # an AsyncOpenAI (or SDK-shaped object) handed to `rollout` itself, as 0.1.x
            # trainers and tests do: the client built for it once per environment
            client = model_client(self, client)
        row_tools = info.get("tool_defs")
        return State(
            input=input,
            prompt=prompt,
            completion="" if text_mode else [],
            answer=input.get("answer", "") or "",
            info=info,
            task=input.get("task"),
            example_id=input.get("example_id", 0),
            client=client,
            model=model,
            sampling_args=sampling_args if sampling_args is not None else self.sampling_args,
            tool_defs=(as_tools(row_tools) if row_tools else None) or self.tool_defs,
            trajectory=[],
            responses=[],  # 0.1.2-0.1.5 environments count the raw model replies here
            turn=0,  # ... and the model turns so far
            # a random 128-bit id, as uuid4().hex gives, without building a UUID
            trajectory_id=os.urandom(16).hex(),
            reward=None,
            metrics={},
            error=None,
            final_env_response=None,
            is_completed=False,
            is_truncated=False,
            stop_condition=None,
            usage={"input_tokens": 0, "output_tokens": 0},
            timing={"start": now(), "start_time": time.time()},
        )

    async def get_model_response(
        self,
        state: State,
        prompt: Messages,
        client: Client | None = None,
        model: str | None = None,
        tool_defs: list[dict[str, Any]] | None = None,
        sampling_args: SamplingArgs | None = None,
    ) -> ModelResponse:
        client = client or state["client"]
        tools = tool_defs if tool_defs is not None else dict.get(state, "tool_defs")
        sampling = sampling_args if sampling_args is not None else state["sampling_args"]
        if self.message_type == "completion":
            if tools:
                raise ConfigError("tools need chat completions; message_type='completion' has none")
            response = await client.get_text_response(
                text_prompt(prompt), model or state["model"], sampling_args=sampling
            )
        else:
            response = await client.get_response(
                prompt, model or state["model"], tools=tools, sampling_args=sampling
            )
        if type(response) is not ModelResponse:  # a 0.3-style client returns a `vf.Response`
            response = model_response(response)
        usage = state["usage"]
        usage["input_tokens"] += response.usage["input_tokens"]
        usage["output_tokens"] += response.usage["output_tokens"]
        return response

    async def rollout(
        self,
        input: dict[str, Any],
        client: Client,
        model: str,
        sampling_args: SamplingArgs | None = None,
    ) -> State:
        raise NotImplementedError

    async def rollout_state(
        self,
        input: dict[str, Any],
        client: Client,
        model: str,
        sampling_args: SamplingArgs | None = None,
        max_retries: int = 0,
    ) -> State:
        """Roll out one input, unscored; never raises (failures are recorded on the state).
        Infra failures are retried up to `max_retries` times."""
        attempt = 0
        while True:
            try:
                state = await self.rollout(input, client, model, sampling_args)
            except Exception as e:
                state = failed_state(self, input, client, model, sampling_args, e, "rollout")
            error = dict.get(state, "error")  # a plain key: no `State.get` call
            if error is None or attempt >= max_retries:
                return state
            err = error_info(error)
            if err is None or not retryable(err):
                return state
            attempt += 1
            await asyncio.sleep(min(30.0, 0.5 * 2**attempt))

    # `run_scored_group(rows, client, model, sampling, *, group_scoring, ...)`: roll out and
    # score one group (the rollouts of one example) on one client, the one path `generate`,
    # `evaluate` and `RolloutStream` run groups through. It is `verifiers.generation.run_group`
    # itself, with this environment as its `env`: a group costs no call layer of its own. A
    # subclass may override it with `async def`; a `verifiers.ray.RayEnvironment` runs it on a
    # cluster actor instead. (Not `run_group`: that name is upstream's trainer call.)
    run_scored_group = run_group

    def failed_outputs(
        self,
        rows: list[dict[str, Any]],
        client: Client,
        model: str,
        sampling: SamplingArgs,
        error: BaseException,
        state_columns: list[str] | None = None,
    ) -> list[RolloutOutput]:
        """Output records for rows whose rollouts never came to an end, all carrying `error`
        (a `WorkerLostError` when the actor running them died): reward NaN, not scored."""
        states = [
            failed_state(self, row, client, model, sampling, error, "rollout") for row in rows
        ]
        set_advantages(states)
        return [self.state_to_output(s, state_columns) for s in states]

    async def score_states(self, states: list[State], group: bool) -> None:
        """Score states in place; a rubric that itself crashes is recorded, not raised.
        `after_scoring` runs for every state afterwards, whatever happened."""
        t0 = now()
        try:
            if not self.score_rollouts:
                for s in states:
                    s["reward"] = 0.0
            else:
                try:
                    if group:
                        await self.rubric.score_group(cast(list[dict[str, Any]], states))
                    else:
                        for s in states:
                            # the base rubric's work without `score_rollout`'s layer (the
                            # time is recorded below, for every state)
                            scoring = direct_scoring(self.rubric, s)
                            if scoring is None:
                                await self.rubric.score_rollout(s)
                            else:
                                apply_score(s, await scoring)
                except Exception as e:
                    for s in states:
                        s["reward"] = math.nan
                        if s.get("error") is None:
                            record_error(s, e, "scoring")
            elapsed = now() - t0
            rubric = self.rubric
            parser = getattr(rubric, "parser", None) or self.parser
            cleans_up = getattr(rubric, "_cleans_up", None)
            cleanup = cleans_up is None or cleans_up()  # a rubric of another make: call it
            note_scoring_time(states, elapsed)
            for s in states:
                s["parsed_answer"] = parsed_answer(parser, dict.get(s, "completion"))
                if cleanup:
                    try:
                        await rubric.cleanup(s)
                    except Exception as e:
                        logger.warning("rubric cleanup failed: %s", e)
        finally:
            # the base hook does nothing: skip the call per rollout unless it is overridden
            if (
                type(self).after_scoring is not Environment.after_scoring
                or "after_scoring" in self.__dict__
            ):
                for s in states:
                    try:
                        await self.after_scoring(s)
                    except Exception as e:
                        if s.get("error") is None:
                            record_error(s, e, "after_scoring")

    async def after_scoring(self, state: State) -> None:
        """Hook: release what reward functions still needed (a sandbox, say). Runs once per
        rollout after scoring, also when scoring failed or was cancelled."""

    def state_to_output(
        self, state: State, state_columns: list[str] | None = None
    ) -> RolloutOutput:
        return output_record(state, state_columns)

    # -- many rollouts ----------------------------------------------------------------------
    async def generate(
        self,
        inputs: Any,
        client: Any,
        model: str,
        sampling_args: SamplingArgs | None = None,
        max_concurrent: int = -1,
        results_path: Any = None,
        state_columns: list[str] | None = None,
        save_results: bool = False,
        independent_scoring: bool = False,
        max_retries: int = 0,
        on_progress: Callable[..., Any] | None = None,
        on_start: Callable[..., Any] | None = None,
        on_log: Callable[[str], Any] | None = None,
        **kwargs: Any,
    ) -> GenerateOutputs:
        """Roll out and score every input. Rollouts of one example form a group."""
        return await run_generation(
            self,
            inputs,
            client,
            model,
            sampling_args=sampling_args,
            max_concurrent=max_concurrent,
            results_path=results_path if (save_results or results_path) else None,
            state_columns=state_columns,
            independent_scoring=independent_scoring,
            max_retries=max_retries,
            on_progress=on_progress,
            on_start=on_start,
            on_log=on_log,
        )

    def generate_sync(self, inputs: Any, client: Any, model: str, **kwargs: Any) -> GenerateOutputs:
        return _run_sync(_closing(self.generate(inputs, client, model, **kwargs), client))

    async def evaluate(
        self,
        client: Any,
        model: str,
        sampling_args: SamplingArgs | None = None,
        num_examples: int = -1,
        rollouts_per_example: int = 1,
        max_concurrent: int = -1,
        results_path: Any = None,
        state_columns: list[str] | None = None,
        save_results: bool = False,
        independent_scoring: bool = False,
        max_retries: int = 0,
        shuffle: bool = False,
        shuffle_seed: int | None = None,
        **kwargs: Any,
    ) -> GenerateOutputs:
        """Evaluate on the first `num_examples` of the eval dataset, `rollouts_per_example` each."""
        # from before the dataset becomes rows: that allocates a container or more per row
        with rollout_gc(max_concurrent):
            inputs = self.eval_inputs(num_examples, rollouts_per_example, shuffle, shuffle_seed)
            return await self.generate(
                inputs,
                client,
                model,
                sampling_args=sampling_args,
                max_concurrent=max_concurrent,
                results_path=results_path,
                state_columns=state_columns,
                save_results=save_results,
                independent_scoring=independent_scoring,
                max_retries=max_retries,
                **kwargs,
            )

    def evaluate_sync(self, client: Any, model: str, **kwargs: Any) -> GenerateOutputs:
        return _run_sync(_closing(self.evaluate(client, model, **kwargs), client))

    # -- lifecycle ------------------------------------------------------------------------
    async def teardown(self) -> None:
        """Release what the environment holds (threads, pooled resources) and run its
        `@vf.teardown` handlers (once; later calls find nothing left to do)."""
        if not getattr(self, "_torn_down", False):
            self._torn_down = True
            for handler in self._teardown_handlers:
                try:
                    result = handler()
                    if inspect.isawaitable(result):
                        await result
                except Exception as e:
                    logger.warning("teardown handler %s failed: %s", handler.__name__, e)
        await self.rubric.teardown()
        self.threads.shutdown()


async def _closing(coro: Any, client: Any) -> Any:
    """Await `coro`, then release the client's connections bound to this (private) loop."""
    try:
        return await coro
    finally:
        if isinstance(client, Client):
            await client.aclose()


def _run_sync(coro: Any) -> Any:
    try:
        asyncio.get_running_loop()
        in_loop = True
    except RuntimeError:
        in_loop = False
    if not in_loop:  # outside the except block, so errors do not chain to that RuntimeError
        return asyncio.run(coro)
    # Called from inside a running loop (a notebook): run on a private loop in a thread.
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()
