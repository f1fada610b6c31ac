"""A classic-API EnvGroup mixing a single-turn math env and a tool env."""

import classic_tool_env
from datasets import Dataset

import verifiers as vf


def load_environment(**kwargs):
    math_rows = [{"question": f"What is {i} + {i}?", "answer": str(2 * i)} for i in range(1, 4)]

    def exact(completion, answer, **kwargs) -> float:
        return 1.0 if vf.extract_boxed_answer(completion[-1]["content"] or "") == answer else 0.0

    math_env = vf.SingleTurnEnv(
        dataset=Dataset.from_list(math_rows), rubric=vf.Rubric(funcs=[exact])
    )
    tool_env = classic_tool_env.load_environment()
    return vf.EnvGroup(envs=[math_env, tool_env], env_names=["math", "calculator"], **kwargs)
