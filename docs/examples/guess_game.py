"""Tutorial: a multi-turn game — the environment answers each guess until a stop condition."""

import re

from datasets import Dataset

import verifiers as vf


class GuessTheNumber(vf.MultiTurnEnv):
    async def setup_state(self, state, **kwargs):
        state["target"] = int(state["answer"])
        return state

    @staticmethod
    def last_guess(state) -> int | None:
        if not state["trajectory"]:
            return None
        text = state["trajectory"][-1]["completion"][-1]["content"] or ""
        numbers = re.findall(r"-?\d+", text)
        return int(numbers[-1]) if numbers else None

    @vf.stop
    async def guessed(self, state) -> bool:
        return self.last_guess(state) == state["target"]

    async def env_response(self, messages, state, **kwargs):
        guess = self.last_guess(state)
        if guess is None:
            return [{"role": "user", "content": "Answer with a number."}]
        return [{"role": "user", "content": "higher" if guess < state["target"] else "lower"}]


def load_environment(max_turns: int = 8, **kwargs) -> vf.Environment:
    rows = [{"question": "Guess my number (1-100).", "answer": str(t)} for t in (37, 64, 90)]

    def solved(state) -> float:
        return 1.0 if state["stop_condition"] == "guessed" else 0.0

    def turns(state) -> float:
        return float(len(state["trajectory"]))

    rubric = vf.Rubric(funcs=[solved, turns], weights=[1.0, 0.0])  # turns: a metric only
    return GuessTheNumber(
        dataset=Dataset.from_list(rows), rubric=rubric, max_turns=max_turns, **kwargs
    )
