"""Running many rollouts with less Python around each (issue 30 item 1): one concurrency
limiter (lanes of groups, no task or semaphore per single-rollout group), the collector's
young threshold scaled with the rollouts in flight, and the same records as before."""

import asyncio
import gc

from datasets import Dataset

import verifiers as vf
from verifiers.generation import (
    GC_ALLOCATIONS_PER_ROLLOUT,
    RUN_GC_THRESHOLD,
    RolloutSlots,
    rollout_gc,
    run_lanes,
)
from verifiers.results import read_results
from verifiers.testing import ScriptedServer


def rows(n: int) -> list[dict]:
    return [{"question": f"What is {i} + 1?", "answer": str(i + 1)} for i in range(n)]


def client_for(srv: ScriptedServer) -> vf.OpenAIClient:
    return vf.OpenAIClient(srv.base_url, api_key="x", retry_base_delay=0.01)


def _where(task: asyncio.Task) -> str:
    code = getattr(task.get_coro(), "cr_code", None)
    return code.co_filename if code is not None else ""


def test_single_rollout_groups_run_in_lanes_without_slots():
    """One rollout per example (`evaluate`'s default): the lanes are the only limiter."""
    groups = [[{"example_id": i}] for i in range(10)]
    assert run_lanes(4, groups) == (4, None)
    assert run_lanes(64, groups) == (10, None)  # never more lanes than groups
    assert run_lanes(0, groups) == (10, None)  # unbounded: every group at once


def test_larger_groups_share_rollout_slots():
    """Groups of 3 with `max_concurrent` 4: the slots bound rollouts, lanes bound groups to
    about two slot-fulls (as the per-group gate did before)."""
    groups = [[{"example_id": i}] * 3 for i in range(10)]
    lanes, slots = run_lanes(4, groups)
    assert lanes == 2 * 4 // 3 + 1
    assert isinstance(slots, RolloutSlots) and slots.limit == 4


def test_single_rollout_run_peaks_at_max_concurrent_with_one_task_per_lane(in_flight):
    """20 single-rollout examples at `max_concurrent` 5: exactly 5 requests in flight at the
    peak, and the run holds about one task per lane, not one per example (seen from the
    server while requests wait)."""
    tasks_seen: list[int] = []
    loop_box: list[asyncio.AbstractEventLoop] = []

    async def responder(body):
        await in_flight.hold(0.01)
        return "\\boxed{1}"

    def reward(completion) -> float:
        loop = loop_box[0]
        # aiohttp writes a request body in a short task of its own: not the run's
        ours = [t for t in asyncio.all_tasks(loop) if "aiohttp" not in _where(t)]
        tasks_seen.append(len(ours))
        return 1.0

    env = vf.SingleTurnEnv(dataset=Dataset.from_list(rows(20)), rubric=vf.Rubric(funcs=[reward]))

    async def run(srv: ScriptedServer) -> vf.GenerateOutputs:
        loop_box.append(asyncio.get_running_loop())
        client = client_for(srv)
        try:
            return await env.evaluate(client, "m", num_examples=20, max_concurrent=5)
        finally:
            await client.aclose()

    with ScriptedServer(responder) as srv:  # serves from its own thread and loop
        out = asyncio.run(run(srv))
    assert len(out["outputs"]) == 20 and all(o["reward"] == 1.0 for o in out["outputs"])
    assert in_flight.peak == 5
    # the 5 lanes and the main task: no task per example (before: one per group, up to 11)
    assert tasks_seen and max(tasks_seen) <= 5 + 1


def test_records_are_ordered_and_complete_for_groups_and_singles(tmp_path):
    """The records (and `results.jsonl`) are the same whichever limiter ran them: every
    (example, rollout) once, sorted, with advantages over the group."""
    env = vf.SingleTurnEnv(
        dataset=Dataset.from_list(rows(6)),
        rubric=vf.Rubric(funcs=[lambda completion, answer: float(answer in str(completion))]),
    )
    with ScriptedServer() as srv:
        out = env.evaluate_sync(
            client_for(srv),
            "m",
            num_examples=6,
            rollouts_per_example=2,
            max_concurrent=3,
            results_path=tmp_path,
        )
    keys = [(o["example_id"], o["rollout_index"]) for o in out["outputs"]]
    assert keys == [(i, j) for i in range(6) for j in range(2)]
    assert all(o["advantage"] == 0.0 for o in out["outputs"])  # both of a group score alike
    assert len(read_results(tmp_path)) == 12


def test_rollout_gc_scales_the_young_threshold_with_rollouts_in_flight():
    """A young collection walks every in-flight rollout's objects: at 4,096 in flight the
    threshold is 200 allocations per rollout, at 16 the run's floor; restored afterwards."""
    before = gc.get_threshold()
    was_enabled = gc.isenabled()
    gc.enable()
    gc.set_threshold(700, 10, 10)
    try:
        with rollout_gc(16):
            assert gc.get_threshold()[0] == RUN_GC_THRESHOLD[0]
            with rollout_gc(4096):  # a nested run with more in flight raises it
                assert gc.get_threshold()[0] == GC_ALLOCATIONS_PER_ROLLOUT * 4096
            assert gc.get_threshold()[0] == GC_ALLOCATIONS_PER_ROLLOUT * 4096
        assert gc.get_threshold() == (700, 10, 10)
    finally:
        gc.set_threshold(*before)
        if not was_enabled:
            gc.disable()


def test_outputs_are_sorted_by_example_and_rollout_with_or_without_both_keys():
    from verifiers.generation import sort_outputs

    full = [{"example_id": e, "rollout_index": r} for e, r in [(2, 1), (1, 0), (2, 0), (0, 3)]]
    sort_outputs(full)
    assert [(o["example_id"], o["rollout_index"]) for o in full] == [(0, 3), (1, 0), (2, 0), (2, 1)]
    partial = [{"example_id": 2}, {"example_id": 1, "rollout_index": 3}, {"rollout_index": 1}]
    sort_outputs(partial)  # a missing key counts as 0
    assert partial == [
        {"rollout_index": 1},
        {"example_id": 1, "rollout_index": 3},
        {"example_id": 2},
    ]


def test_rows_with_both_keys_group_as_rows_without_them():
    """`group_inputs` groups `eval_inputs`' rows (both keys present) with `groupby`: the same
    groups, and the same row objects, as the step-by-step grouping."""
    from verifiers.generation import group_inputs

    ids = [0, 0, 1, 2, 2, 2, 0, 3]
    full = [{"example_id": e, "rollout_index": i, "q": i} for i, e in enumerate(ids)]
    grouped = group_inputs(full)
    assert [[r["q"] for r in g] for g in grouped] == [[0, 1], [2], [3, 4, 5], [6], [7]]
    assert grouped[0][0] is full[0]
    stepwise = group_inputs([{k: v for k, v in r.items() if k != "rollout_index"} for r in full])
    assert [[r["q"] for r in g] for g in stepwise] == [[r["q"] for r in g] for g in grouped]
    assert [r["rollout_index"] for r in stepwise[2]] == [0, 1, 2]
