"""A classic-API ToolEnv: a calculator tool the model calls before answering."""

from datasets import Dataset

import verifiers as vf


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first integer.
        b: The second integer.

    Returns:
        The sum.
    """
    return a + b


def load_environment(max_turns: int = 4, **kwargs):
    rows = [
        {"question": f"What is {a} + {b}?", "answer": str(a + b)}
        for a, b in [(12, 30), (7, 8), (100, 1)]
    ]
    parser = vf.Parser(extract_fn=vf.extract_boxed_answer)

    def correct_answer(completion, answer, **kwargs) -> float:
        return 1.0 if parser.parse_answer(completion) == answer else 0.0

    rubric = vf.Rubric(funcs=[correct_answer], parser=parser)
    return vf.ToolEnv(
        dataset=Dataset.from_list(rows),
        tools=[add],
        max_turns=max_turns,
        parser=parser,
        rubric=rubric,
        **kwargs,
    )
