"""Tutorial: an environment written for classic verifiers (0.1.x), unchanged."""

from datasets import Dataset

import verifiers as vf


def load_environment(**kwargs):
    parser = vf.XMLParser(["think", "answer"], answer_field="answer")
    system_prompt = f"Think step by step, then answer.\n\n{parser.get_format_str()}"

    dataset = Dataset.from_list(
        [
            {"question": "What is 6 * 7?", "answer": "42"},
            {"question": "What is 10 - 3?", "answer": "7"},
        ]
    )

    def correct_answer_reward_func(completion, answer, **kwargs) -> float:
        response = parser.parse_answer(completion) or ""
        return 1.0 if response.strip() == answer else 0.0

    rubric = vf.Rubric(
        funcs=[correct_answer_reward_func, parser.get_format_reward_func()],
        weights=[1.0, 0.2],
    )
    return vf.SingleTurnEnv(
        dataset=dataset, system_prompt=system_prompt, parser=parser, rubric=rubric
    )
