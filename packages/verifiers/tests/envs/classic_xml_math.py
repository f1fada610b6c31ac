"""A classic-API environment: SingleTurnEnv + XMLParser + format reward (unmodified style)."""

from datasets import Dataset

import verifiers as vf


def load_environment(num_examples: int = 20, system_prompt: str | None = None, **kwargs):
    rows = [
        {"question": f"What is {a} + {b}?", "answer": str(a + b)}
        for a, b in ((10 + 7 * i, 300 + 13 * i) for i in range(num_examples))
    ]
    parser = vf.XMLParser(["think", "answer"], answer_field="answer")

    def correct_answer_reward_func(completion, answer, **kwargs) -> float:
        response = parser.parse_answer(completion) or ""
        return 1.0 if response.strip() == answer.strip() else 0.0

    rubric = vf.Rubric(
        funcs=[correct_answer_reward_func, parser.get_format_reward_func()],
        weights=[1.0, 0.2],
        parser=parser,
    )
    return vf.SingleTurnEnv(
        dataset=Dataset.from_list(rows),
        system_prompt=system_prompt
        or f"Think step by step, then answer.\n\nRespond in the following format:\n{parser.get_format_str()}",
        parser=parser,
        rubric=rubric,
        **kwargs,
    )
