"""SingleTurnEnv: one model reply per prompt."""

from __future__ import annotations

from typing import Any

from verifiers.decorators import stop
from verifiers.envs.multiturn_env import MultiTurnEnv
from verifiers.envs.rollout_hooks import plain_form
from verifiers.state import State
from verifiers.types import Messages


def _answered(env: MultiTurnEnv, state: State) -> bool:
    return len(state["trajectory"]) >= 1 and not dict.get(state, "prompt_too_long")


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
