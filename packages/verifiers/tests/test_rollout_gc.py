"""The library's garbage-collector settings for a run of rollouts (issue 30, item 1: CPU per
rollout grew with concurrency because the cyclic collector re-scanned every in-flight and
finished rollout and walked the import-time heap on each full collection).

While `evaluate`, `generate` or a `RolloutStream` runs, the heap that existed at its start is
frozen and young collections are rarer; when the last run in the process ends, nothing global
is left changed. Observed from inside a reward function, so the settings asserted are the ones
the rollouts really ran under."""

import asyncio
import gc

import pytest
from datasets import Dataset

import verifiers as vf
from verifiers.generation import GC_ALLOCATIONS_PER_ROLLOUT, RUN_GC_THRESHOLD, rollout_gc
from verifiers.testing import GateResponder, ScriptedServer


def question(i: int) -> str:
    return f"What is {i} + 1?"


def gc_state() -> tuple[tuple[int, int, int], int, bool]:
    return gc.get_threshold(), gc.get_freeze_count(), gc.isenabled()


def recording_env(n: int, seen: list, first: int = 0) -> vf.SingleTurnEnv:
    """A single-turn env whose (sync) reward function records the collector's settings."""

    def settings_during_scoring(completion) -> float:
        seen.append(gc_state())
        return 1.0

    rows = [{"question": question(i), "answer": str(i + 1)} for i in range(first, first + n)]
    return vf.SingleTurnEnv(
        dataset=Dataset.from_list(rows), rubric=vf.Rubric(funcs=[settings_during_scoring])
    )


@pytest.fixture
def pristine_gc():
    """Default collector settings and no frozen heap around each test, whatever ran before."""
    before = gc.get_threshold()
    was_enabled = gc.isenabled()
    gc.unfreeze()
    gc.set_threshold(700, 10, 10)
    gc.enable()
    yield
    gc.set_threshold(*before)
    if not was_enabled:
        gc.disable()


async def test_evaluate_runs_with_the_heap_frozen_and_restores_everything(pristine_gc):
    seen: list = []
    env = recording_env(4, seen)
    before = gc_state()
    async with ScriptedServer() as srv:
        out = await env.evaluate(srv.base_url, "m", num_examples=4, max_concurrent=2)
    assert len(out["outputs"]) == 4 and len(seen) == 4
    for threshold, frozen, enabled in seen:
        assert threshold[0] >= RUN_GC_THRESHOLD[0] and threshold[1] >= RUN_GC_THRESHOLD[1]
        assert threshold[2] == 10 and frozen > 0 and enabled
    assert gc_state() == before  # thresholds back, heap unfrozen


async def test_overlapping_runs_restore_only_when_the_last_one_ends(pristine_gc):
    """Two concurrent `generate` calls: the first to finish must not undo the settings under
    which the other is still running."""
    gate = GateResponder()
    gate.hold(question(0))
    seen_slow: list = []
    slow, fast = recording_env(1, seen_slow), recording_env(2, [], first=1)
    before = gc_state()
    async with ScriptedServer(gate) as srv:
        slow_run = asyncio.create_task(slow.evaluate(srv.base_url, "m", num_examples=1))
        await gate.arrived[question(0)].wait()
        await fast.evaluate(srv.base_url, "m", num_examples=2)
        assert gc_state() != before  # the slow run is still going
        gate.release(question(0))
        await slow_run
    assert seen_slow[0][0][0] >= RUN_GC_THRESHOLD[0] and seen_slow[0][1] > 0
    assert gc_state() == before


async def test_a_heap_frozen_by_the_caller_stays_frozen(pristine_gc):
    """`vf-eval` freezes the heap itself; the library must not unfreeze it at the end."""
    gc.freeze()
    frozen = gc.get_freeze_count()
    seen: list = []
    env = recording_env(2, seen)
    async with ScriptedServer() as srv:
        await env.evaluate(srv.base_url, "m", num_examples=2)
    # (frozen objects freed meanwhile leave the count; unfreezing would empty it)
    assert gc.get_freeze_count() > frozen // 2
    assert seen[0][0][0] >= RUN_GC_THRESHOLD[0]  # the thresholds still apply to the run
    assert gc.get_threshold() == (700, 10, 10)
    gc.unfreeze()


def test_a_disabled_collector_is_left_alone(pristine_gc):
    gc.disable()
    with rollout_gc():
        assert gc_state() == ((700, 10, 10), 0, False)
    assert gc_state() == ((700, 10, 10), 0, False)


def test_settings_are_restored_when_the_run_raises(pristine_gc):
    with pytest.raises(vf.ConfigError), rollout_gc():
        assert gc.get_freeze_count() > 0
        raise vf.ConfigError("boom")
    assert gc_state() == ((700, 10, 10), 0, True)


async def test_rollout_stream_holds_the_settings_until_it_is_drained(pristine_gc):
    seen: list = []
    env = recording_env(3, seen)
    before = gc_state()
    async with ScriptedServer() as srv:
        stream = vf.RolloutStream(
            env, srv.base_url, "m", env.get_dataset(), rollouts_per_example=2,
            max_in_flight=1, filter_zero_variance=False,
        )  # fmt: skip
        first = await anext(stream)
        assert first.example_id == 0 and gc.get_freeze_count() > 0
        groups = [first] + [g async for g in stream]
    assert len(groups) == 3 and len(seen) == 6
    assert all(t[0] >= RUN_GC_THRESHOLD[0] for t, _, _ in seen)
    assert gc_state() == before


@pytest.mark.parametrize("max_concurrent, in_flight", [(-1, 1_000 * 2), (300, 300)])
async def test_rollout_stream_scales_young_collections_with_its_bound(
    pristine_gc, max_concurrent, in_flight
):
    """As `evaluate` does with `max_concurrent`: a stream's bound on rollouts in flight (its
    groups times their size, or `max_concurrent` when lower) sets the young threshold."""
    seen: list = []
    env = recording_env(2, seen)
    async with ScriptedServer() as srv:
        stream = vf.RolloutStream(
            env, srv.base_url, "m", env.get_dataset(), rollouts_per_example=2,
            max_in_flight=1_000, max_concurrent=max_concurrent, filter_zero_variance=False,
        )  # fmt: skip
        groups = [g async for g in stream]
    assert len(groups) == 2
    assert {t[0] for t, _, _ in seen} == {GC_ALLOCATIONS_PER_ROLLOUT * in_flight}
