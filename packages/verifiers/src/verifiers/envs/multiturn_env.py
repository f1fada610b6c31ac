"""MultiTurnEnv: alternate model turns and environment responses until a stop condition holds."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, ClassVar, cast

from verifiers import decorators
from verifiers.client import Client, ModelResponse
from verifiers.decorators import discover_decorated, stop
from verifiers.envs.classic_hooks import HookCalls, hook_calls, replies_with_messages
from verifiers.envs.environment import Environment
from verifiers.envs.rollout_hooks import (
    CleanupHandlers,
    StopConditions,
    first_cleanup,
    fold_stop_forms,
    plain_form,
)
from verifiers.envs.trajectory import (
    messages_so_far,
    next_prompt,
    render_completion,
    trajectory_step,
)
from verifiers.errors import OverlongPromptError
from verifiers.state import State, now, record_error
from verifiers.types import Messages, RolloutOutput, SamplingArgs, TrajectoryStep


# The built-in stop conditions' bodies (plain stored keys read with `dict.get`, no
# `State.get` call: they run every turn).
def _has_error(env: MultiTurnEnv, state: State) -> bool:
    return dict.get(state, "error") is not None


def _has_final_env_response(env: MultiTurnEnv, state: State) -> bool:
    return dict.get(state, "final_env_response") is not None


def _max_turns_reached(env: MultiTurnEnv, state: State) -> bool:
    return 0 < env.max_turns <= len(state["trajectory"])


def _prompt_too_long(env: MultiTurnEnv, state: State) -> bool:
    return bool(dict.get(state, "prompt_too_long"))


def _max_total_completion_tokens_reached(env: MultiTurnEnv, state: State) -> bool:
    limit = env.max_total_completion_tokens
    return limit is not None and limit > 0 and state["usage"]["output_tokens"] >= limit


def _any_built_in_stop(env: MultiTurnEnv, state: State) -> bool:
    """Whether any of the five above holds, in one call (`fold_stop_forms`)."""
    get = dict.get
    if (
        get(state, "error") is not None
        or get(state, "final_env_response") is not None
        or get(state, "prompt_too_long")
        or 0 < env.max_turns <= len(state["trajectory"])
    ):
        return True
    limit = env.max_total_completion_tokens
    return limit is not None and limit > 0 and state["usage"]["output_tokens"] >= limit


fold_stop_forms(
    [
        _has_error,
        _has_final_env_response,
        _max_turns_reached,
        _prompt_too_long,
        _max_total_completion_tokens_reached,
    ],
    _any_built_in_stop,
)


def _render_state(env: MultiTurnEnv, state: State) -> None:
    env.render_completion(state)


def _built_in_stop(
    check: Callable[[MultiTurnEnv, State], bool], priority: int = 0
) -> Callable[[MultiTurnEnv, State], Coroutine[Any, Any, bool]]:
    """The stop condition `check` as upstream's async method (named as `check`, less its
    underscore), whose body is `check(self, state)`. The loop calls `check` itself while the
    method is not overridden (`plain_form`); subclasses await or override the method."""

    async def condition(self: MultiTurnEnv, state: State) -> bool:
        return check(self, state)

    condition.__name__ = check.__name__.removeprefix("_")
    condition.__qualname__ = f"MultiTurnEnv.{condition.__name__}"
    return stop(priority=priority)(plain_form(check)(condition))


class MultiTurnEnv(Environment):
    """The rollout loop: model turn, stop check, `env_response`, model turn, ...

    Subclasses implement `env_response(messages, state) -> messages` (async or sync; the
    dict-era form returning `(messages, state)` works too) and may add `setup_state`,
    `@vf.stop` conditions and `@vf.cleanup` handlers. How each hook of a class is called is
    decided once, when the class is defined (`verifiers.envs.classic_hooks`).
    """

    _hooks: ClassVar[HookCalls]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._hooks = hook_calls(cls, MultiTurnEnv)

    def __init__(
        self, max_turns: int = -1, timeout_seconds: float | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.max_turns = max_turns
        self.timeout_seconds = timeout_seconds
        self.max_total_completion_tokens = -1
        self.stop_conditions = StopConditions(discover_decorated(self, "stop"))
        self.cleanup_handlers = CleanupHandlers(discover_decorated(self, "cleanup"), self.run_sync)
        # Upstream's shapes, which classic subclasses read: the stop conditions as async
        # callables in priority order, the cleanup handlers as bound methods.
        self._stop_conditions = self.stop_conditions.conditions
        self._cleanup_handlers = self.cleanup_handlers.handlers

    # -- hooks for subclasses ---------------------------------------------------------------
    async def setup_state(self, state: State, **kwargs: Any) -> State | None:
        return state

    @replies_with_messages
    async def env_response(self, messages: Messages, state: State, **kwargs: Any) -> Messages:
        raise NotImplementedError(
            f"{type(self).__name__} must implement env_response(messages, state)"
        )

    def get_prompt_messages_for_turn(self, state: State) -> Messages:
        return state["prompt"]

    # -- built-in stop conditions ---------------------------------------------------------
    # Async methods, as upstream's, over the plain functions above (see `_built_in_stop`).
    has_error = _built_in_stop(_has_error, priority=100)
    has_final_env_response = _built_in_stop(_has_final_env_response)
    max_turns_reached = _built_in_stop(_max_turns_reached)
    prompt_too_long = _built_in_stop(_prompt_too_long)
    max_total_completion_tokens_reached = _built_in_stop(_max_total_completion_tokens_reached)

    async def is_completed(self, state: State, *args: Any, **kwargs: Any) -> bool:
        """Run the stop conditions in priority order; the first that holds ends the rollout."""
        if args and isinstance(args[0], dict):
            # 0.1-era form `is_completed(messages, state)`: a dict-era subclass's super() call
            # asks for the built-in checks only (its own override is the caller).
            return await self.stop_conditions.check(cast(State, args[0]))
        # plain stored keys are read with `dict.get` (no `State.get` call) on the hot path
        return bool(dict.get(state, "is_completed")) or await self.stop_conditions.check(state)

    async def _render_stop(self, state: State, condition: Any) -> bool:
        """Check one stop condition; when it holds, mark the rollout stopped by it (upstream's
        name: classic subclasses that override `is_completed` call it)."""
        return await self.stop_conditions.render(state, condition)

    async def _render_timing(self, state: State) -> None:
        """Record the generation time so far (upstream's hook)."""
        state["timing"]["generation"] = now() - state["timing"]["start"]

    async def _render_completion(self, state: State) -> None:
        """Set `state["completion"]` from the trajectory (upstream's hook)."""
        self.render_completion(state)

    async def _cleanup(self, state: State) -> None:
        """Run the `@vf.cleanup` handlers once per rollout (upstream's hook: a subclass's
        `is_completed` may call it before the loop ends)."""
        if first_cleanup(state):
            await self.cleanup(state)

    # -- the loop -------------------------------------------------------------------------
    async def rollout(
        self,
        input: dict[str, Any],
        client: Client,
        model: str,
        sampling_args: SamplingArgs | None = None,
    ) -> State:
        hooks = self._hooks
        if hooks.base_init_state and "init_state" not in self.__dict__:
            state = self.new_state(input, client, model, sampling_args)
        else:
            state = await hooks.init_state(self, input, client, model, sampling_args)
        try:
            if self.timeout_seconds:
                try:
                    async with asyncio.timeout(self.timeout_seconds):
                        await self._run_turns(state)
                except TimeoutError:
                    state["timed_out"] = True
                    state["is_completed"] = True
                    state["stop_condition"] = "timeout_reached"
            else:
                await self._run_turns(state)
        finally:
            state["timing"]["generation"] = now() - state["timing"]["start"]
            if first_cleanup(state) and not (
                hooks.base_cleanup
                and "cleanup" not in self.__dict__
                and self.cleanup_handlers.run_plain(state)
            ):
                await self.cleanup(state)
        return state

    async def _run_turns(self, state: State) -> None:
        hooks = self._hooks
        own = self.__dict__  # a hook given to the instance itself is always called
        if not hooks.base_setup_state or "setup_state" in own:
            try:
                await hooks.setup_state(self, state)
            except Exception as e:
                record_error(state, e, "setup_state")
        # The class's `is_completed` and `add_model_response` are the base ones: their work,
        # without their coroutines.
        stops = (
            self.stop_conditions if hooks.base_is_completed and "is_completed" not in own else None
        )
        add_plain = hooks.base_add_model_response and "add_model_response" not in own
        while True:
            done = None
            if stops is not None:
                done = True if dict.get(state, "is_completed") else stops.check_now(state)
            if done is None:
                done = await hooks.is_done(self, state)
            if done:
                break
            try:
                if state["trajectory"]:
                    messages = messages_so_far(state)
                    reply = await hooks.env_reply(self, messages, state)
                    prompt = next_prompt(messages, reply, state)
                    if dict.get(state, "final_env_response") is not None:
                        continue
                else:
                    prompt = self.get_prompt_messages_for_turn(state)
            except Exception as e:
                record_error(state, e, "env_response")
                continue
            try:
                response = await self.get_model_response(state, prompt)
            except OverlongPromptError:
                state["prompt_too_long"] = True
                state["is_truncated"] = True
                continue
            except Exception as e:
                record_error(state, e, "model")
                continue
            if add_plain:
                self._add_model_response(state, prompt, response)
            else:
                await hooks.add_model_response(self, state, prompt, response)

    async def add_model_response(
        self, state: State, prompt: Messages, response: ModelResponse
    ) -> None:
        """Record one model turn on the trajectory (upstream's hook: subclasses override it
        and `await super().add_model_response(state, prompt, response)`)."""
        self._add_model_response(state, prompt, response)

    def _add_model_response(self, state: State, prompt: Messages, response: ModelResponse) -> None:
        step = trajectory_step(state, prompt, response, self.max_seq_len)
        state["trajectory"].append(step)
        state["turn"] = len(state["trajectory"])  # dict-era environments read this
        # 0.1.2-0.1.5 environments, reward functions and `state_columns` read the raw replies
        state.setdefault("responses", []).append(response)
        self.add_trajectory_step(state, step)

    def add_trajectory_step(self, state: State, step: TrajectoryStep) -> None:
        """Hook: set per-step rewards or extras as steps are added."""

    # -- completion and cleanup ---------------------------------------------------------------
    def render_completion(self, state: State) -> None:
        render_completion(state)

    @decorators.cleanup(priority=100)
    @plain_form(_render_state)
    async def render_state(self, state: State) -> None:
        _render_state(self, state)

    async def cleanup(self, state: State, task: Any = None, resources: Any = None) -> None:
        """Run the `@vf.cleanup` handlers on `state` (upstream's public call; the rollout
        loop runs them once per rollout). A failing handler is recorded on the state and the
        others still run."""
        context = {"state": state, "env": self, "task": task, "resources": resources}
        await self.cleanup_handlers.run(state, context)

    def metric_names(self) -> list[str]:
        return [*super().metric_names(), "num_turns"]

    def state_to_output(
        self, state: State, state_columns: list[str] | None = None
    ) -> RolloutOutput:
        out = super().state_to_output(state, state_columns)
        out["metrics"] = {
            **out["metrics"],
            "num_turns": float(len(dict.get(state, "trajectory") or ())),
        }
        out["num_turns"] = out["metrics"]["num_turns"]  # type: ignore[typeddict-unknown-key]
        return out


MultiTurnEnv._hooks = hook_calls(MultiTurnEnv, MultiTurnEnv)
