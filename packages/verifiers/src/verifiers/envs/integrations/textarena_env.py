"""TextArenaEnv: play a single-player textarena word game (Wordle-v0 and kin) turn by turn.

Each dataset row is one game: the question is the game's opening observation and the answer
is the secret word, drawn from the game's word list with `seed`. A rollout plays a private
copy of the game whose secret is set to the row's answer; every assistant turn's parsed
answer is one move, and the game's observation (through `feedback_fn`) is the reply. When the
game ends, the game's reason ("Congratulations! ...") is the final environment message.
"""

from __future__ import annotations

import io
import random
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from copy import deepcopy
from typing import Any

from verifiers.decorators import cleanup
from verifiers.envs.integrations._optional import require
from verifiers.envs.multiturn_env import MultiTurnEnv
from verifiers.errors import ConfigError
from verifiers.parsers import XMLParser
from verifiers.rubrics import Rubric
from verifiers.state import State
from verifiers.types import Messages, UserMessage

INSTALL = "pip install 'verifiers[textarena]'"
NLTK_INSTALL = (
    "python -m nltk.downloader words averaged_perceptron_tagger_eng "
    "(or set NLTK_DATA to a directory that holds them)"
)


def _identity(text: str) -> str:
    return text


class TextArenaEnv(MultiTurnEnv):
    """A textarena game as a multi-turn environment (upstream's constructor arguments)."""

    def __init__(
        self,
        game: str = "Wordle-v0",
        num_train_examples: int = 1000,
        num_eval_examples: int = 0,
        system_prompt: str | None = None,
        parser: XMLParser | None = None,
        rubric: Rubric | None = None,
        feedback_fn: Callable[[str], str] = _identity,
        seed: int = 0,
        **kwargs: Any,
    ) -> None:
        ta = require("textarena", "TextArenaEnv", INSTALL)
        parser = parser or XMLParser(fields=["think", "guess"], answer_field="guess")
        self.game = game
        self.ta_env = make_game(ta, game)
        self.shared_memo = self.build_shared_memo(self.ta_env)
        self.num_train_examples = num_train_examples
        self.num_eval_examples = num_eval_examples
        self.seed = seed
        self.feedback_fn = feedback_fn
        dataset, eval_dataset = self.ta_to_hf()
        super().__init__(
            dataset=dataset,
            eval_dataset=eval_dataset,
            system_prompt=system_prompt,
            parser=parser,
            rubric=rubric,
            message_type="chat",
            **kwargs,
        )

    @staticmethod
    def build_shared_memo(ta_env: Any) -> dict[int, Any]:
        """A deepcopy memo that makes every game copy share the read-only word data.

        textarena's English dictionary is hundreds of thousands of strings; copying it for
        every rollout would cost far more than the game itself.
        """
        inner = ta_env
        while hasattr(inner, "env"):
            inner = inner.env
        memo: dict[int, Any] = {}
        for name in ("dictionary", "word_list"):
            shared = getattr(inner, name, None)
            if shared is not None:
                memo[id(shared)] = shared
        return memo

    def ta_to_hf(self) -> tuple[Any, Any]:
        """Train and eval rows: the opening observation and a secret word drawn with `seed`."""
        from datasets import Dataset

        _, question = self.ta_env.get_observation()
        words = _game_words(self.ta_env, self.game)
        # A private generator: the same draws as seeding the global one, without touching it.
        rng = random.Random(self.seed)
        rows = [
            {"question": question, "answer": rng.choice(words)}
            for _ in range(self.num_train_examples + self.num_eval_examples)
        ]
        train, evals = rows[: self.num_train_examples], rows[self.num_train_examples :]
        dataset = Dataset.from_list(train)
        eval_dataset = Dataset.from_list(evals) if self.num_eval_examples > 0 else None
        return dataset, eval_dataset

    async def setup_state(self, state: State, **kwargs: Any) -> State:
        game = await self._fresh_game()
        game.state.game_state["secret_word"] = state["answer"]
        state["ta_env"] = game
        return state

    async def _fresh_game(self) -> Any:
        """The rollout's private copy of the game (its secret not yet set)."""
        return await self.run_sync(deepcopy, self.ta_env, dict(self.shared_memo))

    async def env_response(self, messages: Messages, state: State, **kwargs: Any) -> Messages:
        game = state["ta_env"]
        move = self.parser.parse_answer(messages)
        # An unparsable turn is still a move ("None"): the game answers it as a malformed one.
        await self.run_sync(game.step, str(move))
        if game.state.done:
            reply = UserMessage(content=game.state.game_info[0]["reason"])
            state["final_env_response"] = [reply]
            return [reply]
        _, observation = await self.run_sync(game.get_observation)
        return [UserMessage(content=str(self.feedback_fn(observation)))]

    @cleanup
    async def cleanup_ta_env(self, state: State) -> None:
        state.pop("ta_env", None)


def make_game(ta: Any, game: str, reset: bool = True) -> Any:
    """`ta.make(game)` (reset for one player unless `reset=False`); missing NLTK data is a
    `ConfigError`."""
    nltk = require("nltk", "TextArenaEnv", INSTALL)
    try:
        with _quiet_nltk_downloads(nltk):
            env = ta.make(env_id=game)
            if reset:
                env.reset(num_players=1)
    except LookupError as e:  # nltk's "Resource ... not found"
        found = re.search(r"Resource\s+(\S+)\s+not found", str(e))
        resource = found.group(1) if found else "a resource"
        raise ConfigError(
            f"textarena game {game!r} needs the NLTK data {resource}, which is not installed "
            f"and could not be downloaded. Install it once with: {NLTK_INSTALL}"
        ) from None
    except ValueError as e:
        raise ConfigError(f"TextArenaEnv: {e}") from e
    return env


@contextmanager
def _quiet_nltk_downloads(nltk: Any) -> Iterator[None]:
    """textarena calls `nltk.download` while it builds a game, even when the data is already
    installed; keep those calls silent (also their errors offline: a resource that is really
    missing surfaces as a LookupError, which `make_game` explains) while we build one, without
    changing `nltk.download` for the rest of the process."""
    original = nltk.download

    def quiet(*args: Any, **kwargs: Any) -> Any:
        return original(*args, **{**kwargs, "quiet": True, "print_error_to": io.StringIO()})

    nltk.download = quiet
    try:
        yield
    finally:
        nltk.download = original


def _game_words(ta_env: Any, game: str) -> list[str]:
    words = getattr(ta_env, "word_list", None)
    if words is None:
        raise ConfigError(
            f"TextArenaEnv draws each game's secret word from the game's word list, and "
            f"textarena game {game!r} has none; use a word game such as 'Wordle-v0'"
        )
    if isinstance(words, dict):  # some games keep words by category
        return [
            w
            for values in words.values()
            for w in (values if isinstance(values, (list, tuple)) else [values])
        ]
    return list(words)
