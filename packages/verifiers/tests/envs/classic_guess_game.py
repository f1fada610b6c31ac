"""A classic-API MultiTurnEnv game: guess the number, with hints, ended by a @vf.stop condition."""

import re

from datasets import Dataset

import verifiers as vf


class GuessEnv(vf.MultiTurnEnv):
    async def setup_state(self, state, **kwargs):
        state["target"] = int(state["answer"])
        state["hints"] = []
        return state

    def _last_guess(self, state):
        if not state["trajectory"]:
            return None
        text = state["trajectory"][-1]["completion"][-1]["content"] or ""
        numbers = re.findall(r"-?\d+", text)
        return int(numbers[-1]) if numbers else None

    @vf.stop
    async def guessed_it(self, state) -> bool:
        return self._last_guess(state) == state["target"]

    async def env_response(self, messages, state, **kwargs):
        guess = self._last_guess(state)
        if guess is None:
            hint = "Please answer with a number."
        else:
            hint = "higher" if guess < state["target"] else "lower"
        state["hints"].append(hint)
        return [{"role": "user", "content": hint}]


def load_environment(max_turns: int = 10, **kwargs):
    rows = [
        {"question": "Guess my number between 1 and 100.", "answer": str(t)}
        for t in (37, 50, 99, 1, 64)
    ]

    def solved(state, **kwargs) -> float:
        return 1.0 if state["stop_condition"] == "guessed_it" else 0.0

    def efficiency(state, **kwargs) -> float:
        return 1.0 / len(state["trajectory"])

    rubric = vf.Rubric(funcs=[solved, efficiency], weights=[1.0, 0.0])
    return GuessEnv(dataset=Dataset.from_list(rows), rubric=rubric, max_turns=max_turns, **kwargs)
