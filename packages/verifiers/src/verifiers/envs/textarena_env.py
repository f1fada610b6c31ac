"""The 0.1.x module path of TextArenaEnv, with the 0.1.x end of game.

Environments written for 0.1.2–0.1.8 import `verifiers.envs.textarena_env.TextArenaEnv`, and
their reward functions read the conversation as 0.1.8 left it: when the game ends, the reply
is still `feedback_fn(observation)` (not the game's end reason), the model answers once more,
and the `game_completed` stop condition ends the rollout. Each rollout's game is reset before
its secret is set. Everything else is `verifiers.envs.integrations.textarena_env.TextArenaEnv`
(the 0.1.12+ path and `vf.TextArenaEnv`).
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any

from verifiers.decorators import stop
from verifiers.envs.integrations._optional import require
from verifiers.envs.integrations.textarena_env import INSTALL, make_game
from verifiers.envs.integrations.textarena_env import TextArenaEnv as _TextArenaEnv
from verifiers.state import State
from verifiers.types import Messages, UserMessage

__all__ = ["TextArenaEnv"]


class TextArenaEnv(_TextArenaEnv):
    """TextArenaEnv as upstream 0.1.8 ran it (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # 0.1.8 copied a game that was never reset or observed: textarena's observation
        # wrapper keeps its history across resets, so copying the dataset-building game would
        # show the opening prompt twice.
        ta = require("textarena", "TextArenaEnv", INSTALL)
        self.fresh_env = make_game(ta, self.game, reset=False)
        self.fresh_memo = self.build_shared_memo(self.fresh_env)

    async def _fresh_game(self) -> Any:
        game = await self.run_sync(deepcopy, self.fresh_env, dict(self.fresh_memo))
        await self.run_sync(game.reset, num_players=1)
        return game

    async def env_response(self, messages: Messages, state: State, **kwargs: Any) -> Messages:
        game = state["ta_env"]
        move = self.parser.parse_answer(messages)
        done, _ = await self.run_sync(game.step, str(move))
        state["game_completed"] = bool(done)
        _, observation = await self.run_sync(game.get_observation)
        return [UserMessage(content=str(self.feedback_fn(observation)))]

    @stop
    async def game_completed(self, state: State) -> bool:
        return bool(state.get("game_completed", False))
