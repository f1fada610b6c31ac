"""SingleTurnEnv: one model reply per prompt."""

from __future__ import annotations

from typing import Any

from verifiers.decorators import stop
from verifiers.envs.multiturn_env import BUILT_IN_STOP_FORMS, MultiTurnEnv
from verifiers.envs.rollout_hooks import fold_stop_forms, plain_form
from verifiers.state import State
from verifiers.types import Messages


def _answered(env: MultiTurnEnv, state: State) -> bool:
    return len(state["trajectory"]) >= 1 and not dict.get(state, "prompt_too_long")


def _answered_or_any_built_in_stop(env: MultiTurnEnv, state: State) -> bool:
    """Whether `_answered` or any of MultiTurnEnv's built-in conditions holds, in one call
    (a single-turn rollout's every condition; `max_turns_reached` needs a turn taken)."""
    get = dict.get
    if (
        get(state, "error") is not None
        or get(state, "final_env_response") is not None
        or get(state, "prompt_too_long")
        or len(state["trajectory"]) >= 1
    ):
        return True
    limit = env.max_total_completion_tokens
    return limit is not None and limit > 0 and state["usage"]["output_tokens"] >= limit


fold_stop_forms([*BUILT_IN_STOP_FORMS, _answered], _answered_or_any_built_in_stop)


class SingleTurnEnv(MultiTurnEnv):
    """A MultiTurnEnv with `max_turns=1`: the model answers once and the rollout is scored."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs["max_turns"] = 1
        super().__init__(**kwargs)

    @stop(priority=1)  # before max_turns_reached, which holds too
    @plain_form(_answered)
    async def single_turn_completed(self, state: State) -> bool:
        """The model answered its one turn: the rollout is complete, not out of turns.
        Upstream (PrimeIntellect-ai/verifiers, envs/singleturn_env.py) reports
        `max_turns_reached` here."""
        return _answered(self, state)

    async def env_response(self, messages: Messages, state: State, **kwargs: Any) -> Messages:
        raise NotImplementedError("SingleTurnEnv has no environment response")
