"""A classic-API environment with a group reward function (plural parameters → one call per group)."""

from datasets import Dataset

import verifiers as vf


def load_environment(**kwargs):
    rows = [
        {"question": f"What is {i} + {i}?", "answer": str(2 * i), "difficulty": i % 3}
        for i in range(1, 7)
    ]

    def correct(completion, answer, parser, **kwargs) -> float:
        return (
            1.0 if vf.extract_boxed_answer(parser.parse_answer(completion) or "") == answer else 0.0
        )

    def unique_answers(completions, **kwargs) -> list[float]:
        texts = [c[-1]["content"] for c in completions]
        share = len(set(texts)) / len(texts)
        return [share] * len(texts)

    def difficulty_bonus(difficulty, **kwargs) -> float:
        return float(difficulty)

    rubric = vf.Rubric(funcs=[correct, unique_answers, difficulty_bonus], weights=[1.0, 0.5, 0.0])
    return vf.SingleTurnEnv(dataset=Dataset.from_list(rows), rubric=rubric)
