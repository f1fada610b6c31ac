"""SingleTurnEnv: one model reply per prompt."""

from __future__ import annotations

from typing import Any

from verifiers.envs.multiturn_env import MultiTurnEnv
from verifiers.state import State
from verifiers.types import Messages


class SingleTurnEnv(MultiTurnEnv):
    """A MultiTurnEnv with `max_turns=1`: the model answers once and the rollout is scored."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs["max_turns"] = 1
        super().__init__(**kwargs)

    async def env_response(self, messages: Messages, state: State, **kwargs: Any) -> Messages:
        raise NotImplementedError("SingleTurnEnv has no environment response")
