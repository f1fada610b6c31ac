"""Rubric patterns of classic environments: plain `funcs`/`weights` lists (and their 0.1-era
names), keyword spellings, registration-order scoring, loggers, and 0.1-era scoring calls."""

from __future__ import annotations

import asyncio
import logging
import math

import pytest

import verifiers as vf
from verifiers.state import State
from verifiers.testing import rollout_state
from verifiers.types import RolloutScores


def make_state(text: str = "4", answer: str = "4") -> State:
    return State(rollout_state("2+2?", text, answer, task="default"), trajectory=[])


def exact(completion, answer) -> float:
    return float(completion[-1]["content"] == answer)


async def test_funcs_and_weights_are_plain_lists_subclasses_assign():
    """upstream 0.3.1 legacy/rubrics/rubric.py: `self.funcs` / `self.weights` are lists that
    subclasses assign and extend; upstream 0.1.3-0.1.7 rubric.py: the same lists are
    `reward_funcs` / `reward_weights` (kernelbench, xml_tool_env assign those)."""

    def half(completion) -> float:
        return 0.5

    class Assigning(vf.Rubric):
        def __init__(self, **kw):
            super().__init__(**kw)
            self.reward_funcs = [exact, half]
            self.reward_weights = [1.0]
            self.reward_weights.append(2.0)

    r = Assigning()
    assert r.funcs == [exact, half] and r.weights == [1.0, 2.0]
    state = make_state()
    await r.score_rollout(state)
    assert state["reward"] == 2.0 and state["metrics"] == {"exact": 1.0, "half": 0.5}

    r.funcs = [half]
    r.weights = [4.0]
    r.funcs.append(exact)
    r.weights.append(0.0)
    assert r.get_reward_func_names() == ["half", "exact"]
    assert r._get_reward_funcs() == [half, exact] and r._get_reward_weights() == [4.0, 0.0]
    state = make_state()
    await r.score_rollout(state)
    assert state["reward"] == 2.0


async def test_old_keyword_spellings_and_extra_attributes():
    """upstream 0.1.3-0.1.7 rubric.py: extra keyword arguments become attributes, so
    `Rubric(reward_funcs=[f])` (gpu_puzzles) registers `f` with weight 1.0."""
    r = vf.Rubric(reward_funcs=[exact], threshold=3)
    assert r.funcs == [exact] and r.weights == [1.0]
    assert r.threshold == 3 and r.class_objects["threshold"] == 3
    state = make_state()
    await r.score_rollout(state)
    assert state["reward"] == 1.0


async def test_functions_run_in_registration_order():
    """upstream 0.3.1 legacy/rubrics/rubric.py score_group: each reward function finishes for
    every rollout before the next starts, so a later one reads what an earlier one (sync or
    async) left in the state (i3_math's `judge_score` reads `math_verify_score`)."""
    log: list[str] = []

    async def first(state) -> float:
        await asyncio.sleep(0.01)
        state["first"] = 1.0
        log.append("first")
        return 1.0

    def second(state) -> float:  # sync: runs in a worker thread
        log.append("second")
        return state["first"] + 1.0

    async def third(state) -> int:
        log.append("third")
        return int(state["first"]) * 3

    r = vf.Rubric(funcs=[first, second, third])
    states = [make_state(), make_state()]
    await r.score_group(states)
    assert log == ["first", "first", "second", "second", "third", "third"]
    assert [s["reward"] for s in states] == [6.0, 6.0]


async def test_int_and_bool_rewards_count_as_numbers():
    """upstream 0.3.1 legacy/rubrics/rubric.py: a reward function's result goes through
    float(), so ints and bools are scores."""

    def is_right(completion, answer) -> bool:
        return completion[-1]["content"] == answer

    def count(completion) -> int:
        return 2

    r = vf.Rubric(funcs=[is_right, count])
    state = make_state()
    await r.score_rollout(state)
    assert state["metrics"] == {"is_right": 1.0, "count": 2.0} and state["reward"] == 3.0


async def test_same_name_twice_keeps_both_weights():
    """upstream 0.3.1 legacy/rubrics/rubric.py: the reward adds every function's weighted score;
    the metric of a repeated name holds the last one's."""
    r = vf.Rubric(funcs=[lambda completion: 1.0, lambda completion: 2.0], weights=[1.0, 10.0])
    state = make_state()
    await r.score_rollout(state)
    assert state["reward"] == 21.0 and state["metrics"] == {"<lambda>": 2.0}


def test_loggers_are_named_as_upstream():
    """upstream 0.3.1 legacy/rubrics/rubric.py: `self.logger` is named after the base rubric
    module and the instance's class (0.3.1's path has `legacy.`; ours is the classic path)."""

    class MyRubric(vf.Rubric):
        pass

    assert vf.Rubric().logger.name == "verifiers.rubrics.rubric.Rubric"
    assert MyRubric().logger.name == "verifiers.rubrics.rubric.MyRubric"
    assert vf.RubricGroup([vf.Rubric()]).logger.name == "verifiers.rubrics.rubric.RubricGroup"
    assert isinstance(MyRubric().logger, logging.Logger)


async def test_score_object_providers_add_objects():
    """upstream 0.3.1 legacy/rubrics/rubric.py: `add_score_object_provider(provider)` merges
    `provider(state)` into what reward functions can ask for."""

    def uses_extra(extra) -> float:
        return extra

    r = vf.Rubric(funcs=[uses_extra])
    r.add_score_object_provider(lambda state: {"extra": 0.25})
    state = make_state()
    await r.score_rollout(state)
    assert state["reward"] == 0.25


async def test_classic_score_rollout_call_returns_a_score():
    """upstream 0.1.2-0.1.7 rubric.py: `score_rollout(prompt, completion, answer, state, task,
    info)` returns a RolloutScore and `score_rollouts(prompts, ...)` a RolloutScores."""

    def with_task(completion, answer, task) -> float:
        return exact(completion, answer) + (task == "math")

    r = vf.Rubric(funcs=[with_task])
    s = make_state()
    score = await r.score_rollout(s["prompt"], s["completion"], "4", {}, "math", {})
    assert score == {"reward": 2.0, "metrics": {"with_task": 2.0}}
    scores = await r.score_rollouts(
        [s["prompt"]] * 2,
        [s["completion"], [{"role": "assistant", "content": "5"}]],
        ["4", "4"],
        [{}, {}],
        ["x", "math"],
        [],  # 0.1.2's default: no infos
    )
    assert scores == {"reward": [1.0, 1.0], "metrics": {"with_task": [1.0, 1.0]}}


async def test_classic_score_rollouts_override_scores_the_group():
    """upstream 0.1.2-0.1.7 rubric.py: environments override `score_rollouts(prompts,
    completions, answers, states, tasks, infos, **kwargs)` returning RolloutScores
    (arc_agi_tool); their rubric's rollouts are scored through it."""

    class Override(vf.Rubric):
        async def score_rollouts(self, prompts, completions, answers, states, tasks, infos, **kw):
            base = await super().score_rollouts(prompts, completions, answers, states, tasks, infos)
            doubled = [2 * r for r in base["reward"]]
            return RolloutScores(reward=doubled, metrics={"doubled": doubled})

    r = Override(funcs=[exact])
    states = [make_state("4"), make_state("5")]
    await r.score_group(states)
    assert [s["reward"] for s in states] == [2.0, 0.0]
    assert states[0]["metrics"] == {"doubled": 2.0}
    assert [s["advantage"] for s in states] == [1.0, -1.0]


async def test_classic_score_rollout_override_and_its_failure():
    """upstream 0.1.2-0.1.7 rubric.py: `score_rollout(prompt, completion, answer, state, ...)`
    overrides score each rollout; one that raises errors the rollouts (NaN), as a failing
    reward function does (ours: never a silent 0.0)."""

    class PerRollout(vf.Rubric):
        async def score_rollout(self, prompt, completion, answer, state, task="default", info=None):
            if answer == "boom":
                raise RuntimeError("grader down")
            return {"reward": 0.5, "metrics": {"half": 0.5}}

    r = PerRollout()
    state = make_state()
    await r.score_group([state])
    assert state["reward"] == 0.5 and state["metrics"] == {"half": 0.5}
    bad = make_state(answer="boom")
    await r.score_group([bad])
    assert math.isnan(bad["reward"]) and "grader down" in bad["error"]["message"]


async def test_rubric_group_forwards_additions_to_first_rubric(caplog):
    """upstream 0.3.1 legacy/rubrics/rubric_group.py: `add_reward_func` / `add_metric` on a
    group go to its first rubric, with a warning."""
    first, second = vf.Rubric(), vf.Rubric(funcs=[exact])
    group = vf.RubricGroup([first, second])
    with caplog.at_level("WARNING", logger="verifiers"):
        group.add_reward_func(exact, 2.0)
        group.add_metric(lambda completion: 7.0)
    assert first.funcs[0] is exact and first.weights == [2.0, 0.0]
    assert len(caplog.records) == 2
    assert group.get_reward_func_names() == ["exact", "<lambda>", "exact"]
    state = make_state()
    await group.score_group([state])
    assert state["reward"] == 3.0


def test_weight_mismatch_after_assignment_is_reported():
    """Ours: a rubric whose `funcs` and `weights` lists drifted apart is a ConfigError at the
    first use (upstream's zip silently dropped the extra functions)."""
    r = vf.Rubric(funcs=[exact])
    r.funcs.append(exact)
    with pytest.raises(vf.ConfigError, match="2 reward functions but 1 weights"):
        r.get_reward_func_names()


async def test_cleanup_and_teardown_decorated_methods_run():
    """upstream 0.3.1 legacy/rubrics/rubric.py: `@vf.cleanup` methods of a rubric run after
    each rollout (asking for `state` and the rollout's fields by name), `@vf.teardown` ones at
    teardown; a RubricGroup runs its own and its children's."""
    seen: list[tuple] = []

    class WithHandlers(vf.Rubric):
        @vf.cleanup
        async def release(self, state, answer):
            seen.append(("release", answer))

        @vf.cleanup(priority=5)
        def first(self, state):
            seen.append(("first", state["answer"]))

        @vf.teardown
        async def close(self):
            seen.append(("close",))

    child = WithHandlers(funcs=[exact])
    child.add_cleanup_handler(lambda completion: seen.append(("extra", len(completion))))
    group = vf.RubricGroup([child])
    state = make_state()
    await group.score_group([state])
    await group.cleanup(state)
    await group.teardown()
    assert seen == [("first", "4"), ("extra", 1), ("release", "4"), ("close",)]


async def test_sync_reward_needing_the_main_thread_runs_there(caplog):
    """upstream 0.3.1 legacy/rubrics/rubric.py ran sync reward functions on the event loop's
    thread, and classic ones rely on it (math-verify's signal-based timeouts, signal.alarm
    code runners: vf_math_python, xml_tool_env). Ours runs them in worker threads; one that
    fails because signals need the main thread is run again there, and stays there."""
    import signal
    import threading

    threads: list[bool] = []

    def with_alarm(completion) -> float:
        threads.append(threading.current_thread() is threading.main_thread())
        signal.signal(signal.SIGALRM, signal.getsignal(signal.SIGALRM))
        return 1.0

    r = vf.Rubric(funcs=[with_alarm])
    with caplog.at_level("WARNING", logger="verifiers"):
        for _ in range(2):
            state = make_state()
            await r.score_rollout(state)
            assert state["reward"] == 1.0 and state["error"] is None
    assert threads == [False, True, True]  # tried in a worker once, then on the loop
    assert len(caplog.records) == 1 and "main thread" in caplog.records[0].getMessage()


async def test_math_verify_in_a_sync_reward_function():
    """upstream v0.1.2 environments (vf_math_python) call math_verify's parse/verify with its
    default signal timeouts from a sync reward function; it grades as on upstream."""
    from math_verify import parse, verify

    def correct(completion, answer) -> float:
        return float(verify(parse(f"\\boxed{{{answer}}}"), parse(completion[-1]["content"])))

    r = vf.Rubric(funcs=[correct])
    state = make_state(text="\\boxed{0.5}", answer="1/2")
    await r.score_rollout(state)
    assert state["reward"] == 1.0


async def test_0_1_8_calls_with_a_scoring_semaphore():
    """upstream v0.1.8 rubrics/rubric.py: `score_rollout(state, score_sem)` and
    `score_group(states, score_sem)` score in place while holding the semaphore."""
    held: list[bool] = []
    sem = asyncio.Semaphore(1)

    def probe(completion, answer) -> float:
        held.append(sem.locked())
        return exact(completion, answer)

    r = vf.Rubric(funcs=[probe])
    state = make_state()
    assert await r.score_rollout(state, sem) is None
    assert state["reward"] == 1.0
    states = [make_state(), make_state("5")]
    await r.score_group(states, sem)
    assert [s["reward"] for s in states] == [1.0, 0.0] and held == [True, True, True]


async def test_functions_after_an_infra_failure_are_skipped():
    """Ours: upstream 0.3.1 legacy/rubrics/rubric.py called every function (0.0 on errors);
    here once a function fails on infrastructure the rollout is masked (NaN, infra error) and
    its later functions are not called, so broken infrastructure is not asked again. A plain
    bug does not skip anything."""
    calls: list[str] = []

    async def judge_down(answer) -> float:
        calls.append(f"judge:{answer}")
        if answer == "down":
            raise vf.InfraError("judge unreachable")
        return 1.0

    def later(completion) -> float:
        calls.append("later")
        return 1.0

    def buggy(completion) -> float:
        raise KeyError("oops")

    r = vf.Rubric(funcs=[judge_down, later])
    down, up = make_state(answer="down"), make_state(answer="up")
    await r.score_group([down, up])
    assert sorted(calls) == ["judge:down", "judge:up", "later"]
    assert math.isnan(down["reward"]) and down["error"]["infra"] is True
    assert math.isnan(down["metrics"]["later"]) and up["reward"] == 2.0

    calls.clear()
    r = vf.Rubric(funcs=[buggy, later])
    state = make_state()
    await r.score_rollout(state)
    assert calls == ["later"] and state["error"]["infra"] is False
