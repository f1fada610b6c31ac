"""The parts `Rubric` is made of (issues 29 and 30): classic overrides decided once per class,
call plans read once per function, sync reward functions batched into shared worker hops
(slow ones in their own threads), and the rubric modules free of import cycles."""

from __future__ import annotations

import ast
import asyncio
import math
import pathlib
import pickle
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import pytest

import verifiers as vf
import verifiers.rubrics
from verifiers.testing.environments import rollout_state
from verifiers.types import RolloutScores


def make_state(text: str = "4", answer: str = "4") -> dict:
    return rollout_state("2+2?", text, answer, task="default")


def exact(completion, answer) -> float:
    return float(completion[-1]["content"] == answer)


def long_answer(completion) -> float:
    return float(len(completion[-1]["content"]) > 3)


def cheap_rubric() -> vf.Rubric:
    """Sync functions counted as cheap whatever this machine's load makes them measure, and
    batched to worker threads (never run on the loop)."""
    rubric = vf.Rubric(funcs=[exact, long_answer])
    rubric.sync_calls.slow_after_s = math.inf
    rubric.sync_calls.inline_below_s = 0.0
    return rubric


async def test_classic_overrides_are_decided_when_the_class_is_made(monkeypatch):
    """Issue 29 item 3: a 0.1-era `score_rollouts(prompts, ...)` override (upstream 0.1.2-0.1.7
    rubric.py; arc_agi_tool) is found when the class is defined; scoring then asks nothing of
    `inspect` (it used to re-read the override's signature on every call)."""

    class Classic(vf.Rubric):
        async def score_rollouts(self, prompts, completions, answers, states, tasks, infos):
            base = await super().score_rollouts(prompts, completions, answers, states, tasks, infos)
            return RolloutScores(reward=[2 * r for r in base["reward"]], metrics={})

    class Modern(vf.Rubric):
        async def score_rollout(self, state, **kwargs):
            await super().score_rollout(state)

    assert Classic.classic_overrides == {"score_rollouts"}
    assert Modern.classic_overrides == frozenset() == vf.Rubric.classic_overrides
    r = Classic(funcs=[exact])
    states = [make_state("4"), make_state("5")]
    await r.score_group(states)  # the first call reads the reward functions' signatures

    def no_inspection(*args, **kwargs):
        raise AssertionError("inspect.signature called while scoring")

    monkeypatch.setattr("inspect.signature", no_inspection)
    states = [make_state("4"), make_state("5")]
    await r.score_group(states)
    assert [s["reward"] for s in states] == [2.0, 0.0]
    monkeypatch.undo()
    state = make_state()
    await Modern(funcs=[exact]).score_rollout(state)
    assert state["reward"] == 1.0


async def test_classic_score_rollout_override_scores_a_state_in_place():
    """upstream 0.1.2-0.1.7 rubric.py: environments override `score_rollout(prompt, completion,
    answer, state, ...)`; environments of 0.1.8+ call `score_rollout(state)`. The override is
    adapted once per class, so both calls work: the state is scored through the override (it
    used to raise TypeError), and the classic call still returns the override's score."""

    class PerRollout(vf.Rubric):
        async def score_rollout(self, prompt, completion, answer, state, task="default", info=None):
            return {"reward": 0.5 + (answer == "4"), "metrics": {"half": 0.5}}

    r = PerRollout()
    state = make_state()
    assert await r.score_rollout(state) is None
    assert state["reward"] == 1.5 and state["metrics"] == {"half": 0.5}
    assert await r.score_rollout(state["prompt"], state["completion"], "3", {}) == {
        "reward": 0.5,
        "metrics": {"half": 0.5},
    }
    assert PerRollout.score_rollout.__name__ == "score_rollout"


def test_call_plans_are_kept_until_a_list_changes():
    """Issue 29 item 3: each function's signature is read once; the plans are rebuilt only
    when `funcs` / `weights` (plain lists, upstream 0.3.1) change, however they change."""
    r = vf.Rubric(funcs=[exact])
    first = r.reward_registry.specs(r.funcs, r.weights)
    assert r.reward_registry.specs(r.funcs, r.weights) is first
    r.add_metric(long_answer)
    second = r.reward_registry.specs(r.funcs, r.weights)
    assert [s.name for s in second] == ["exact", "long_answer"] and second[0] is not first[0]
    assert second[0].call is first[0].call  # the signature was not read again
    r.funcs[1] = exact
    r.weights[1] = 3.0
    assert [(s.name, s.weight) for s in r.specs()] == [("exact", 1.0), ("exact", 3.0)]


@dataclass
class Constant:
    """A callable reward whose instances all compare equal (`value` is not compared)."""

    value: float = field(compare=False)
    __name__ = "constant"

    def __call__(self, completion) -> float:
        return self.value


async def test_an_equal_but_other_function_gets_its_own_plan():
    """Ours: plans are matched to the functions by identity, so replacing a function with an
    equal object (a callable dataclass) scores with the new one."""
    r = vf.Rubric(funcs=[Constant(1.0)])
    state = make_state()
    await r.score_rollout(state)
    r.funcs[0] = Constant(2.0)
    assert r.funcs[0] == Constant(1.0)
    state = make_state()
    await r.score_rollout(state)
    assert state["reward"] == 2.0


async def test_cheap_sync_functions_share_one_worker_hop():
    """Issue 30 item 1 ("a worker-thread hop per sync reward function"): the sync functions
    of rollouts scored at the same time go to a worker thread together, one hop for each
    function's turn, instead of one hop per function per rollout (32 here). They still run
    off the event loop's thread, in registration order."""
    rubric = cheap_rubric()
    loop_thread = threading.get_ident()
    threads: set[int] = set()

    def where(completion) -> float:
        threads.add(threading.get_ident())
        return 0.0

    rubric.add_metric(where)
    await rubric.score_rollout(make_state())  # measures each function once
    rubric.sync_calls.hops = 0
    states = [make_state("4" if i % 2 else "12345") for i in range(16)]
    await asyncio.gather(*(rubric.score_rollout(s) for s in states))
    assert rubric.sync_calls.hops == 3  # one per function, for all 16 rollouts
    assert all(s["reward"] == 1.0 for s in states)
    assert [s["metrics"]["exact"] for s in states[:2]] == [0.0, 1.0]
    assert loop_thread not in threads


async def test_the_cheapest_sync_functions_run_on_the_loop():
    """Issue 30 item 1: a sync function measured under `inline_below_s` runs on the event
    loop's thread from its next call on (a thread hop costs more than it does); one call that
    takes longer sends it back to worker threads. Its first call is measured in a worker."""
    rubric = vf.Rubric(funcs=[exact])
    rubric.sync_calls.inline_below_s = math.inf  # whatever this machine measures
    loop_thread = threading.get_ident()
    threads: list[int] = []
    slow = False

    def where(completion) -> float:
        threads.append(threading.get_ident())
        if slow:
            rubric.sync_calls.inline_below_s = 0.0  # this call "took too long"
        return 0.0

    rubric.add_metric(where)
    for _ in range(3):
        await rubric.score_rollout(make_state())
    assert threads[0] != loop_thread and threads[1:] == [loop_thread, loop_thread]
    rubric.sync_calls.hops = 0
    state = make_state()
    await rubric.score_rollout(state)
    assert state["reward"] == 1.0 and rubric.sync_calls.hops == 0
    slow = True
    await rubric.score_rollout(make_state())  # on the loop, measured over the bar
    slow = False
    await rubric.score_rollout(make_state())
    assert threads[-2] == loop_thread and threads[-1] != loop_thread
    assert rubric.sync_calls.hops == 2  # `exact` and `where`, back in workers


async def test_one_quick_call_after_a_slow_one_does_not_put_a_function_on_the_loop(
    monkeypatch,
):
    """A function is judged by the slower of its last two calls: after a slow call (10 ms on a
    scripted clock) one quick call is not enough to run it on the loop; two are. (Two calls
    that wait for each other return one slow and one quick: the quick one alone must not put
    a blocking function on the loop.)"""
    import types

    import verifiers.rubrics.sync_calls as sync_calls

    now = [0.0]
    durations = [0.010, 0.00001, 0.00001, 0.00001]
    monkeypatch.setattr(sync_calls, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))
    loop_thread = threading.get_ident()
    on_loop: list[bool] = []

    def scripted(completion) -> float:
        on_loop.append(threading.get_ident() == loop_thread)
        now[0] += durations.pop(0)
        return 1.0

    rubric = vf.Rubric(funcs=[scripted])
    for _ in range(4):
        state = make_state()
        await rubric.score_rollout(state)
        assert state["reward"] == 1.0
    assert on_loop == [False, False, False, True]


async def test_slow_sync_functions_get_threads_of_their_own():
    """Issue 30 item 1: a sync function measured slow keeps a worker thread per call, so the
    rollouts of a group run it side by side (two calls meet at a barrier: batched, the first
    would wait for the second forever and the barrier would break)."""
    barrier = threading.Barrier(2, timeout=30)

    def meets_the_other(completion) -> float:
        barrier.wait()
        return 1.0

    rubric = vf.Rubric(funcs=[meets_the_other])
    rubric.sync_calls.slow_after_s = 0.0  # every call counts as slow
    for _ in range(2):  # the second time, both calls have been measured
        states = [make_state(), make_state()]
        await rubric.score_group(states)
        assert [s["reward"] for s in states] == [1.0, 1.0], states[0]["error"]


async def test_a_batch_whose_executor_is_gone_errors_its_rollouts():
    """Ours: a batch that cannot reach a worker thread (its executor shut down) records the
    failure on every rollout waiting in it (NaN reward, an error record), nothing is lost."""
    rubric = cheap_rubric()
    rubric.executor = ThreadPoolExecutor(max_workers=1)
    await rubric.score_rollout(make_state())
    rubric.executor.shutdown()
    states = [make_state(), make_state()]
    await rubric.score_group(states)
    for s in states:
        assert math.isnan(s["reward"]) and "shutdown" in s["error"]["message"]


async def test_rubric_pickles_after_scoring():
    """A rubric is picklable (environments and MathRubric copies are), also once its sync
    calls have run: the copy measures its functions afresh and scores the same."""
    rubric = cheap_rubric()
    await rubric.score_rollout(make_state())
    copy = pickle.loads(pickle.dumps(rubric))
    state = make_state("12345", answer="12345")
    await copy.score_rollout(state)
    assert state["reward"] == 2.0 and copy.sync_calls.slow_after_s == math.inf
    assert copy.sync_calls.inline_below_s == 0.0


def test_rubric_modules_import_no_cycle():
    """Issue 29 ("real import cycles: rubrics/rubric <-> rubrics/classic_scoring"): the
    modules of `verifiers.rubrics` import each other without a cycle, lazy imports included."""
    root = pathlib.Path(verifiers.rubrics.__file__).parent
    graph: dict[str, set[str]] = {}
    for path in root.glob("*.py"):
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            deps |= {n.rsplit(".", 1)[-1] for n in names if n.startswith("verifiers.rubrics.")}
        graph[path.stem] = deps & {p.stem for p in root.glob("*.py")} - {path.stem}
    assert graph["classic_scoring"].isdisjoint({"rubric", "rubric_group"})

    def reaches(start: str, target: str, seen: set[str]) -> bool:
        for dep in graph.get(start, ()):
            if dep == target or (dep not in seen and reaches(dep, target, seen | {dep})):
                return True
        return False

    cyclic = sorted(m for m in graph if m != "__init__" and reaches(m, m, {m}))
    assert cyclic == []


@pytest.mark.parametrize("call", ["state_and_sem", "keywords"])
async def test_0_1_8_shapes_still_score_in_place(call):
    """upstream v0.1.8 rubrics/rubric.py: `score_rollout(state, score_sem)` and the keyword
    spellings take the state path, not the 0.1.2 one (the shapes are told apart only off the
    one-argument path)."""
    rubric = vf.Rubric(funcs=[exact])
    state = make_state()
    if call == "state_and_sem":
        result = await rubric.score_rollout(state, asyncio.Semaphore(1))
    else:
        result = await rubric.score_rollout(state=state)
    assert result is None and state["reward"] == 1.0


def test_new_bars_rejudge_the_functions_measured_so_far():
    """`inline_below_s` / `slow_after_s` set after calls were measured decide at once which
    functions run on the loop (the cheap ones are kept in a table the bars rebuild)."""
    import logging

    from verifiers.rubrics.sync_calls import SyncCalls

    calls = SyncCalls(logging.getLogger("t"), inline_below_s=math.inf, slow_after_s=math.inf)

    def f() -> float:
        return 1.0

    assert not calls.on_loop(f)  # not measured yet
    assert calls.run_measured(f, {}) == 1.0
    assert calls.on_loop(f)
    calls.inline_below_s = 0.0
    assert not calls.on_loop(f)
    calls.inline_below_s = math.inf
    assert calls.on_loop(f) and calls.run_on_loop(f, {}) == 1.0
    calls.slow_after_s = 0.0
    assert not calls.on_loop(f)
    copy = SyncCalls.__new__(SyncCalls)
    copy.__setstate__(calls.__getstate__())
    assert copy.slow_after_s == 0.0 and copy.inline_below_s == math.inf
