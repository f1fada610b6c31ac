"""Upstream's trainer-facing calls on an environment, in the forms classic trainers use.

prime-rl's orchestrators call `env.run_group(...)` / `env.run_rollout(...)`; the shape of those
calls changed between verifiers releases:

- 0.1.8 (prime-rl v0.2): `run_rollout(sem, input, client, model, sampling_args)` returns the
  unscored state; `run_group(group_inputs, client, model, gen_sampling_args, gen_sem,
  score_sem)` returns the group's scored states.
- 0.1.12 (prime-rl v0.5): `run_rollout(input, client, model, sampling_args, max_retries,
  state_columns, env_client)` returns one scored output record; `run_group(group_inputs,
  client, model, sampling_args, max_retries, state_columns, env_client)` returns the group's
  output records.

The two are told apart by their arguments (a semaphore where 0.1.12 has data), and both run on
the SDK's one rollout path (`generation.run_group`).

0.1.8 calls return states in 0.1.8's shape (`verifiers.envs.classic_records`). In the 0.1.12
form an env server takes the call when one is attached: the `env_client`
argument, else the routed member's `env_client` attribute (prime-rl v0.5 sets it on every
member of its `EnvGroup`), else the environment's own.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from verifiers.client import Client, ClientConfig, merge_sampling_args, resolve_client
from verifiers.envs.classic_records import (
    as_018_state,
    prepare_rollout_results_call,
    process_env_results_vllm_call,
    set_018_timing,
)
from verifiers.errors import ConfigError
from verifiers.generation import needs_group_scoring
from verifiers.generation import run_group as run_scored_group
from verifiers.openai_sdk import is_openai_client
from verifiers.rubrics.rubric import set_advantages
from verifiers.token_in_client import TokenInClient

if TYPE_CHECKING:
    from verifiers.envs.environment import Environment

_ROLLOUT_018 = ("sem", "input", "client", "model", "sampling_args")
_ROLLOUT_0112 = (
    "input",
    "client",
    "model",
    "sampling_args",
    "max_retries",
    "state_columns",
    "env_client",
)
_GROUP_018 = ("group_inputs", "client", "model", "gen_sampling_args", "gen_sem", "score_sem")
_GROUP_0112 = ("group_inputs", *_ROLLOUT_0112[1:])  # the group's inputs, then the same


def _is_semaphore(obj: Any) -> bool:
    return hasattr(obj, "__aenter__") and not isinstance(obj, (dict, list, str))


def _bind(names: tuple[str, ...], args: tuple, kwargs: dict[str, Any], call: str) -> dict:
    if len(args) > len(names):
        raise TypeError(f"{call}() takes at most {len(names)} positional arguments")
    bound = dict(zip(names, args, strict=False))
    for key, value in kwargs.items():
        if key in bound:
            raise TypeError(f"{call}() got multiple values for argument {key!r}")
        bound[key] = value
    return bound


def model_client(env: Environment, client: Any) -> Client:
    """The SDK client for a trainer's client (an `AsyncOpenAI`, a `ClientConfig`, ...), built
    once per environment and client so repeated calls share one connection pool."""
    if isinstance(client, Client):
        return client
    cache: dict[int, tuple[Any, Client]] = env.__dict__.setdefault("_trainer_clients", {})
    hit = cache.get(id(client))
    if hit is not None and hit[0] is client:
        return hit[1]
    resolved = token_in_client(client) if getattr(env, "interleaved_rollouts", False) else None
    if resolved is None:
        resolved, _owned = resolve_client(client)
    cache[id(client)] = (client, resolved)  # the original is kept so its id stays its own
    return resolved


def token_in_client(client: Any) -> Client | None:
    """The client of an environment with interleaved rollouts (0.1.8's
    `set_interleaved_rollouts(True)`): turns after the first go token-in, on prime-rl's
    `/chat/completions/tokens` route with the previous turn's exact ids (`TokenInClient`,
    which sends messages where it cannot stitch). None for a client it cannot be built from."""
    if isinstance(client, ClientConfig):
        return replace(client, client_type="openai_chat_completions_token").build()
    if isinstance(client, str) or is_openai_client(client):
        return TokenInClient(client)
    return None


def served_by(env: Environment, explicit: Any, first_input: Any) -> Any:
    """The env server client that takes a 0.1.12 call, or None to run it in process: the
    `env_client` argument, else (in a group) the member the input routes to, else `env`'s own
    `env_client` (upstream 0.1.12 EnvGroup.run_rollout: argument, member, group)."""
    if explicit is not None:
        return explicit
    route = getattr(env, "route", None)
    if callable(route) and isinstance(first_input, dict):
        try:
            member, child_input = route(first_input)
        except ConfigError:
            member = None  # the in-process run records the routing error on the rollout
        if member is not None and member is not env:
            inner = served_by(member, None, child_input)
            if inner is not None:
                return inner
    return getattr(env, "env_client", None)


async def run_rollout_call(env: Environment, args: tuple, kwargs: dict[str, Any]) -> Any:
    if (args and _is_semaphore(args[0])) or "sem" in kwargs:
        bound = _bind(_ROLLOUT_018, args, kwargs, "run_rollout")
        client = model_client(env, bound["client"])
        sampling = merge_sampling_args(env.sampling_args, bound.get("sampling_args"))
        async with bound["sem"]:
            state = await env.rollout_state(bound["input"], client, bound["model"], sampling)
        as_018_state(env, state)
        return state
    bound = _bind(_ROLLOUT_0112, args, kwargs, "run_rollout")
    server = served_by(env, bound.get("env_client"), bound["input"])
    if server is not None:
        return await server.run_rollout(
            bound["input"],
            bound["client"],
            bound["model"],
            bound.get("sampling_args") or {},
            bound.get("max_retries") or 0,
            bound.get("state_columns"),
        )
    outputs = await run_scored_group(
        env,
        [bound["input"]],
        model_client(env, bound["client"]),
        bound["model"],
        merge_sampling_args(env.sampling_args, bound.get("sampling_args")),
        group_scoring=False,
        max_retries=bound.get("max_retries") or 0,
        state_columns=bound.get("state_columns"),
    )
    return outputs[0]


async def run_group_call(env: Environment, args: tuple, kwargs: dict[str, Any]) -> Any:
    legacy = (len(args) > 4 and _is_semaphore(args[4])) or "gen_sem" in kwargs
    if legacy or "gen_sampling_args" in kwargs:
        bound = _bind(_GROUP_018, args, kwargs, "run_group")
        return await _run_group_018(env, bound)
    bound = _bind(_GROUP_0112, args, kwargs, "run_group")
    group_inputs = list(bound["group_inputs"])
    server = served_by(env, bound.get("env_client"), group_inputs[0] if group_inputs else None)
    if server is not None:
        return await server.run_group(
            group_inputs,
            bound["client"],
            bound["model"],
            bound.get("sampling_args") or {},
            bound.get("max_retries") or 0,
            bound.get("state_columns"),
        )
    return await run_scored_group(
        env,
        group_inputs,
        model_client(env, bound["client"]),
        bound["model"],
        merge_sampling_args(env.sampling_args, bound.get("sampling_args")),
        group_scoring=needs_group_scoring(env.rubric),
        max_retries=bound.get("max_retries") or 0,
        state_columns=bound.get("state_columns"),
    )


async def _run_group_018(env: Environment, bound: dict[str, Any]) -> list[Any]:
    """Roll out under `gen_sem`, score the whole group under `score_sem`; the states."""
    client = model_client(env, bound["client"])
    model = bound["model"]
    sampling = merge_sampling_args(env.sampling_args, bound.get("gen_sampling_args"))
    gen_sem = bound.get("gen_sem")
    score_sem = bound.get("score_sem")

    async def one(row: dict[str, Any]) -> Any:
        if gen_sem is None:
            state = await env.rollout_state(row, client, model, sampling)
        else:
            async with gen_sem:
                state = await env.rollout_state(row, client, model, sampling)
        as_018_state(env, state)  # before scoring: 0.1.8 reward functions saw these fields
        return state

    rows = [
        {**row, "rollout_index": row.get("rollout_index", i)}
        for i, row in enumerate(bound["group_inputs"])
    ]
    states = list(await asyncio.gather(*(one(row) for row in rows)))
    if score_sem is None:
        await env.score_states(states, group=True)
    else:
        async with score_sem:
            await env.score_states(states, group=True)
    if not all("advantage" in s for s in states):
        set_advantages(states)
    for state in states:
        set_018_timing(state)
    return states


_GENERATE_KEYWORDS = frozenset(
    {"results_path", "state_columns", "save_results", "independent_scoring", "max_retries"}
)


def _env(obj: ClassicCallsMixin) -> Environment:
    """The environment the mixin's methods run on (only `Environment` inherits it)."""
    return cast("Environment", obj)


class ClassicCallsMixin:
    """Upstream's trainer-facing methods on `Environment` (prime-rl's and 0.1.5-era
    trainers' calls), each a thin shape over the SDK's rollout path."""

    def set_interleaved_rollouts(self, interleaved_rollouts: bool) -> None:
        """Upstream 0.1.8's switch for prime-rl's token-prompt requests (prime-rl v0.2 sets it
        for its interleaved trajectory strategy): the trainer's clients handed to
        `run_group` / `run_rollout` are then used token-in (`verifiers.training.TokenInClient`:
        turns after the first send the previous turn's exact ids). An SDK `Client` passed in
        is used as it is. An EnvGroup's members get the flag too, as upstream's EnvGroup
        passes it on."""
        self.interleaved_rollouts = bool(interleaved_rollouts)
        for member in getattr(self, "envs", None) or ():
            member.set_interleaved_rollouts(interleaved_rollouts)

    async def run_rollout(self, *args: Any, **kwargs: Any) -> Any:
        """Upstream's `run_rollout`, in both of its classic forms:

        - 0.1.12: `run_rollout(input, client, model, sampling_args, max_retries=0,
          state_columns=None)` rolls out and scores one input and returns its output record;
        - 0.1.8: `run_rollout(sem, input, client, model, sampling_args=None)` rolls out one
          input under the semaphore `sem` and returns its (unscored) state.
        """
        return await run_rollout_call(_env(self), args, kwargs)

    async def run_group(self, *args: Any, **kwargs: Any) -> Any:
        """Upstream's `run_group`, in both of its classic forms:

        - 0.1.12: `run_group(group_inputs, client, model, sampling_args, max_retries=0,
          state_columns=None)` returns the group's scored output records;
        - 0.1.8: `run_group(group_inputs, client, model, gen_sampling_args, gen_sem, score_sem)`
          returns the group's scored states.
        """
        return await run_group_call(_env(self), args, kwargs)

    async def a_generate(
        self,
        inputs: Any,
        client: Any,
        model: str,
        sampling_args: Any = None,
        score_rollouts: bool = True,
        max_concurrent: int = -1,
        **kwargs: Any,
    ) -> Any:
        """0.1.5's name of `generate`, with its positional order and `score_rollouts` as an
        argument."""
        env = _env(self)
        previous = env.score_rollouts
        env.score_rollouts = score_rollouts
        try:
            return await env.generate(
                inputs,
                client,
                model,
                sampling_args=sampling_args,
                max_concurrent=max_concurrent,
                **{k: v for k, v in kwargs.items() if k in _GENERATE_KEYWORDS},
            )
        finally:
            env.score_rollouts = previous

    # 0.1.8's columnar results of finished states (prime-rl v0.2 saves evals from them with
    # `verifiers.utils.eval_utils`): the function itself, `self` as its environment.
    _prepare_rollout_results = prepare_rollout_results_call

    def process_env_results_vllm(
        self,
        prompts: list[Any],
        completions: list[Any],
        states: list[Any],
        rewards: list[float],
        processing_class: Any = None,
        max_seq_len: int = -1,
        mask_env_responses: bool = False,
        mask_truncated_completions: bool = False,
        zero_truncated_completions: bool = False,
    ) -> Any:
        """0.1.5's training data of many rollouts (`ProcessedOutputs`). The token ids are the
        server's (so `processing_class` is not needed), and environment responses between
        turns are always masked."""
        return process_env_results_vllm_call(
            prompts,
            completions,
            states,
            rewards,
            max_seq_len=max_seq_len,
            mask_truncated_completions=mask_truncated_completions,
            zero_truncated_completions=zero_truncated_completions,
        )

    def _get_eval_inputs(
        self, num_examples: int = -1, rollouts_per_example: int = 1
    ) -> list[dict[str, Any]]:
        """Upstream 0.1.12's name of `eval_inputs` (prime-rl v0.5 evaluates through it)."""
        return _env(self).eval_inputs(num_examples, rollouts_per_example)

    async def _teardown(self) -> None:
        """Upstream's name of `teardown`."""
        await _env(self).teardown()
