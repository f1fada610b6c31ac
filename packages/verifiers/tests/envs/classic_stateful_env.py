"""A classic-API StatefulToolEnv: a per-rollout session injected as a hidden tool argument."""

from datasets import Dataset

import verifiers as vf


class SessionEnv(vf.StatefulToolEnv):
    def __init__(self, **kwargs):
        super().__init__(tools=[], **kwargs)
        self.add_tool(self.add, args_to_skip=["session"])

    async def setup_state(self, state, **kwargs):
        state["session"] = {"calls": 0, "id": f"session-{state['example_id']}"}
        return await super().setup_state(state, **kwargs)

    def add(self, a: int, b: int, session: dict) -> str:
        """Add two integers inside the rollout's session."""
        session["calls"] += 1
        return str(a + b)

    def update_tool_args(self, tool_name, tool_args, messages, state, **kwargs):
        if tool_name == "add":
            tool_args["session"] = state["session"]
        return tool_args


def load_environment(**kwargs):
    rows = [
        {"question": f"What is {a} + {b}?", "answer": str(a + b)} for a, b in [(3, 4), (50, 60)]
    ]

    def correct(completion, answer, **kwargs) -> float:
        return 1.0 if vf.extract_boxed_answer(completion[-1]["content"] or "") == answer else 0.0

    def session_calls(state, **kwargs) -> float:
        return float(state["session"]["calls"])

    rubric = vf.Rubric(funcs=[correct, session_calls], weights=[1.0, 0.0])
    return SessionEnv(dataset=Dataset.from_list(rows), rubric=rubric, max_turns=4, **kwargs)
