"""A classic-API judge environment: SingleTurnEnv + RubricGroup([JudgeRubric, format Rubric]).

Written the way classic environments are: a raw `AsyncOpenAI` judge client, a judge reward
function that awaits the injected `judge`, and a second rubric for format.
"""

from datasets import Dataset
from openai import AsyncOpenAI

import verifiers as vf


def load_environment(
    judge_base_url=None, judge_model="judge-model", format_weight=0.5, num_examples=4, **kwargs
):
    # Every third answer is wrong on purpose, so the judge says "no" to the model's reply.
    rows = [
        {"question": f"What is {i} + {i}?", "answer": str(2 * i if i % 3 else 2 * i + 1)}
        for i in range(1, num_examples + 1)
    ]
    parser = vf.Parser(extract_fn=vf.extract_boxed_answer)
    judge_client = AsyncOpenAI(base_url=judge_base_url, api_key="x") if judge_base_url else None
    judge_rubric = vf.JudgeRubric(
        parser=parser,
        judge_client=judge_client,
        judge_model=judge_model,
        judge_sampling_args={"max_tokens": 8, "temperature": 0.0},
    )

    async def judge_correct(judge, prompt, completion, answer, state) -> float:
        verdict = await judge(prompt, completion, answer, state)
        return 1.0 if "yes" in verdict.lower() else 0.0

    judge_rubric.add_reward_func(judge_correct)

    def boxed_format(completion, **kwargs) -> float:
        return 1.0 if "\\boxed{" in (completion[-1]["content"] or "") else 0.0

    format_rubric = vf.Rubric(funcs=[boxed_format], weights=[format_weight])
    rubric = vf.RubricGroup([judge_rubric, format_rubric])
    return vf.SingleTurnEnv(dataset=Dataset.from_list(rows), parser=parser, rubric=rubric, **kwargs)
