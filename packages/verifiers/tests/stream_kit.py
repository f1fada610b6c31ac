"""What the rollout-stream tests share (test_training_stream.py, test_weight_updates.py): the
arithmetic environments they stream, the stream over them, and a wait on the event loop.
Importable by name because conftest.py puts this folder on sys.path."""

import asyncio

from datasets import Dataset

import verifiers as vf


def boxed_correct(completion, answer) -> float:
    return float(f"\\boxed{{{answer}}}" in (completion[-1].get("content") or ""))


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def question(i: int) -> str:
    return f"What is {i} + 1?"


def single_env(n: int) -> vf.SingleTurnEnv:
    """`n` single-turn examples, `question(i)` answered by ``i + 1``, scored by `boxed_correct`."""
    ds = Dataset.from_list([{"question": question(i), "answer": str(i + 1)} for i in range(n)])
    return vf.SingleTurnEnv(dataset=ds, rubric=vf.Rubric(funcs=[boxed_correct]))


def stream_over(env, client, *, filter_zero_variance=False, **options) -> vf.RolloutStream:
    """A RolloutStream of model "m" over every example of `env`. Unlike the default, groups
    whose rewards are all equal are kept unless asked: most tests here are about ordering."""
    return vf.RolloutStream(
        env,
        client,
        "m",
        env.get_dataset(),
        filter_zero_variance=filter_zero_variance,
        **options,
    )


async def wait_until(condition) -> None:
    """Yield to the loop until `condition()` holds (the test's timeout bounds a hang)."""
    while not condition():
        await asyncio.sleep(0.001)
