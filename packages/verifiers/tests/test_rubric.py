import asyncio
import math
import threading

import pytest

import verifiers as vf
from verifiers.state import State


def make_state(completion_text="The answer is \\boxed{4}.", answer="4", **extra):
    prompt = [{"role": "user", "content": "What is 2+2?"}]
    state = State(
        input={"prompt": prompt, "answer": answer, "example_id": 0, **extra},
        prompt=prompt,
        completion=[{"role": "assistant", "content": completion_text}],
        answer=answer,
        info={"level": 1},
        task=None,
        example_id=0,
        trajectory=[{"reward": None, "advantage": None}],
        metrics={},
        error=None,
    )
    return state


async def test_weighted_sum_metrics_and_injection():
    seen = {}

    def correct(completion, answer, parser) -> float:
        seen["parser"] = parser
        return float(vf.extract_boxed_answer(completion[-1]["content"]) == answer)

    async def length(completion, info, difficulty) -> float:
        seen["info"], seen["difficulty"] = info, difficulty
        return len(completion[-1]["content"])

    rubric = vf.Rubric(funcs=[correct], weights=[2.0])
    rubric.add_metric(length)
    state = make_state(difficulty="hard")
    await rubric.score_rollout(state)
    assert state["reward"] == 2.0
    assert state["metrics"] == {"correct": 1.0, "length": float(len("The answer is \\boxed{4}."))}
    assert seen["parser"] is rubric.parser
    assert seen["info"] == {"level": 1} and seen["difficulty"] == "hard"


async def test_class_objects_and_kwargs_functions():
    def uses_judge(judge, **kwargs) -> float:
        assert "state" in kwargs and "prompt" in kwargs
        return judge

    rubric = vf.Rubric(funcs=[uses_judge])
    rubric.add_class_object("judge", 0.25)
    state = make_state()
    await rubric.score_rollout(state)
    assert state["reward"] == 0.25


async def test_failing_reward_is_an_error_not_zero():
    def broken(completion) -> float:
        raise RuntimeError("judge unreachable")

    def fine(completion) -> float:
        return 1.0

    rubric = vf.Rubric(funcs=[fine, broken])
    state = make_state()
    await rubric.score_rollout(state)
    assert math.isnan(state["reward"])
    assert math.isnan(state["metrics"]["broken"]) and state["metrics"]["fine"] == 1.0
    assert state["error"]["error"] == "RewardError"
    assert (
        "broken" in state["error"]["message"] and "judge unreachable" in state["error"]["message"]
    )


async def test_non_numeric_reward_is_an_error():
    rubric = vf.Rubric(funcs=[lambda completion: "yes"])
    state = make_state()
    await rubric.score_rollout(state)
    assert math.isnan(state["reward"])
    assert "not a number" in state["error"]["message"]


async def test_sync_reward_runs_off_the_event_loop():
    loop_thread = threading.get_ident()
    threads = []

    def slow(completion) -> float:
        threads.append(threading.get_ident())
        return 1.0

    rubric = vf.Rubric(funcs=[slow])
    await rubric.score_rollout(make_state())
    assert threads and threads[0] != loop_thread


async def test_sync_reward_does_not_stall_other_work():
    # A blocking reward function must leave the loop free to run other coroutines.
    started = threading.Event()

    def blocking(completion) -> float:
        started.set()
        threading.Event().wait(0.3)
        return 1.0

    ticks = 0

    async def ticker():
        nonlocal ticks
        while not started.is_set():
            await asyncio.sleep(0.001)
        for _ in range(10):
            ticks += 1
            await asyncio.sleep(0.005)

    rubric = vf.Rubric(funcs=[blocking])
    await asyncio.gather(rubric.score_rollout(make_state()), ticker())
    assert ticks == 10


def test_unknown_parameter_is_a_clear_config_error():
    def needs_magic(completion, magic_number) -> float:
        return 0.0

    rubric = vf.Rubric(funcs=[needs_magic])
    with pytest.raises(vf.ConfigError, match="needs_magic.*'magic_number'"):
        rubric.check_parameters(["prompt", "answer", "example_id"])
    rubric.check_parameters(["prompt", "answer", "magic_number"])  # a dataset column: fine


def test_weights_length_mismatch():
    with pytest.raises(vf.ConfigError, match="2 reward functions but 1 weights"):
        vf.Rubric(funcs=[lambda c: 1.0, lambda c: 1.0], weights=[1.0])


async def test_group_function_called_once_per_group():
    calls = []

    def rank(completions, answers) -> list[float]:
        calls.append(len(completions))
        return [float(i) for i in range(len(completions))]

    rubric = vf.Rubric(funcs=[rank])
    states = [make_state() for _ in range(4)]
    await rubric.score_group(states)
    assert calls == [4]
    assert [s["reward"] for s in states] == [0.0, 1.0, 2.0, 3.0]
    assert [s["advantage"] for s in states] == [-1.5, -0.5, 0.5, 1.5]
    assert states[0]["trajectory"][0]["advantage"] == -1.5


async def test_group_function_wrong_length_is_an_error():
    rubric = vf.Rubric(funcs=[lambda states: [1.0]])
    states = [make_state(), make_state()]
    await rubric.score_group(states)
    assert all(math.isnan(s["reward"]) for s in states)
    assert "returned 1 scores for 2 rollouts" in states[0]["error"]["message"]


async def test_rubric_group_sums_and_advantages_come_from_final_reward():
    def first(completion, answer) -> float:
        return 1.0 if answer == "1" else 0.0

    def second(completion) -> float:
        return 0.5

    group = vf.RubricGroup([vf.Rubric(funcs=[first]), vf.Rubric(funcs=[second], weights=[2.0])])
    states = [make_state(answer="1"), make_state(answer="0")]
    await group.score_group(states)
    assert [s["reward"] for s in states] == [2.0, 1.0]
    assert [s["advantage"] for s in states] == [0.5, -0.5]
    assert states[0]["metrics"] == {"first": 1.0, "second": 0.5}


def test_rubric_group_needs_rubrics():
    with pytest.raises(vf.ConfigError):
        vf.RubricGroup([])
