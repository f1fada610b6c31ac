"""Tutorial: a single-turn environment — one question, one answer, graded by a function."""

from datasets import Dataset

import verifiers as vf


def load_environment(num_examples: int = 20, **kwargs) -> vf.Environment:
    rows = [
        {"question": f"What is {a} + {b}? Put the result in \\boxed{{}}.", "answer": str(a + b)}
        for a, b in ((i, 2 * i + 1) for i in range(num_examples))
    ]
    parser = vf.Parser(extract_fn=vf.extract_boxed_answer)

    def correct(completion, answer) -> float:
        # A wrong or missing answer is 0.0; an exception here would be recorded as an error.
        return 1.0 if parser.parse_answer(completion) == answer else 0.0

    rubric = vf.Rubric(funcs=[correct], parser=parser)
    return vf.SingleTurnEnv(
        dataset=Dataset.from_list(rows),
        system_prompt="Answer with the number in \\boxed{}.",
        parser=parser,
        rubric=rubric,
        **kwargs,
    )
