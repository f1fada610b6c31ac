"""MathRubric (math-verify in a process pool) and the ProcessPool it runs on.

Pools are module-scoped (worker start-up is the slow part) and shared across the tests'
event loops, which also checks that a pool serves successive loops.
"""

import asyncio
import ctypes
import json
import math
import multiprocessing
import os
import pickle
import signal
import subprocess
import sys
import time

import pytest
from datasets import Dataset

import verifiers as vf
from verifiers.rubrics.math_rubric import MathRubric, strict_boxed_answer
from verifiers.testing import ScriptedServer
from verifiers.testing.processes import wait_gone
from verifiers.utils.process_pool import (
    PoolClosedError,
    PoolOverloadedError,
    ProcessPool,
    WorkerCrashedError,
    WorkerTimeoutError,
)

PATHOLOGICAL = "10^{10^{10}}"


def state_for(text: str, answer: str) -> dict:
    prompt = [{"role": "user", "content": "Solve it."}]
    return {
        "input": {"prompt": prompt, "answer": answer, "example_id": 0},
        "prompt": prompt,
        "completion": [{"role": "assistant", "content": text}],
        "answer": answer,
        "info": {},
        "task": None,
        "example_id": 0,
        "metrics": {},
        "error": None,
    }


@pytest.fixture(scope="module")
def rubric():
    r = MathRubric(max_workers=2, timeout_seconds=1)
    yield r
    asyncio.run(r.teardown())


@pytest.fixture(scope="module")
def pool():
    p = ProcessPool(size=2, name="vf-test-pool")
    yield p
    p.close()


async def score(rubric: MathRubric, text: str, answer: str) -> dict:
    s = state_for(text, answer)
    await rubric.score_rollout(s)
    return s


# -- grading ------------------------------------------------------------------------------
async def test_equivalences_and_wrong_answers(rubric):
    cases = [
        ("1/2", "0.5", 1.0),
        ("\\frac{1}{2}", "\\dfrac12", 1.0),
        ("2\\sqrt{2}", "\\sqrt{8}", 1.0),
        ("\\{1,2\\}", "\\{2,1\\}", 1.0),
        ("x^2+2x+1", "(x+1)^2", 1.0),
        ("3", "4", 0.0),
        ("(1,2)", "(2,1)", 0.0),  # gold first: an interval, not a set
        ("\\frac{\\sqrt{3}}{2}", "\\sin 60^\\circ", 1.0),  # degrees, not radians (issue 27)
        ("\\frac{\\sqrt{3}}{2}", "\\sin 60", 0.0),
    ]
    states = await asyncio.gather(
        *(score(rubric, f"So the answer is $\\boxed{{{resp}}}$.", gold) for gold, resp, _ in cases)
    )
    got = [(gold, resp, s["reward"]) for (gold, resp, _), s in zip(cases, states, strict=True)]
    assert got == [(g, r, want) for g, r, want in cases]
    assert all(s["error"] is None and "math_verify_timeout" not in s for s in states)
    assert all(s["metrics"] == {"correct_answer": s["reward"]} for s in states)


async def test_strict_extraction_after_think(rubric):
    think_only = "<think>Maybe \\boxed{3}.</think> I think it is three."
    after_think = "<think>Maybe \\boxed{4}?</think> Final: \\boxed{3}"
    unclosed = "<think>Hmm, \\boxed{3} and then I ran out of tokens"
    no_box = "After computing, the final value is 3."
    results = [(await score(rubric, t, "3"))["reward"] for t in (think_only, after_think)]
    results += [(await score(rubric, t, "3"))["reward"] for t in (unclosed, no_box)]
    assert results == [0.0, 1.0, 0.0, 0.0]
    assert strict_boxed_answer("no box here") == ""
    assert strict_boxed_answer("\\boxed{\\frac{1}{2}} then \\boxed{x^{2}}") == "x^{2}"


async def test_overlong_and_empty_answers_score_zero_without_grading(monkeypatch):
    r = MathRubric(max_workers=1, timeout_seconds=1, max_verify_chars=10)
    sent: list[tuple] = []

    async def recording_run(fn, *args, **kwargs):  # type: ignore[no-untyped-def]
        sent.append(args)
        raise AssertionError("graded")

    monkeypatch.setattr(r.pool, "run", recording_run)
    long_answer = "1+" * 10 + "1"
    assert (await score(r, f"\\boxed{{{long_answer}}}", "11"))["reward"] == 0.0
    assert (await score(r, "\\boxed{}", "0"))["reward"] == 0.0
    assert (await score(r, "\\boxed{3}", ""))["reward"] == 0.0
    assert sent == []  # rejected before anything went to a worker
    monkeypatch.undo()
    await r.teardown()


async def test_pathological_answer_times_out_while_others_finish(rubric):
    done: dict[int, float] = {}
    t0 = time.perf_counter()

    async def timed(i: int, text: str, answer: str) -> dict:
        s = await score(rubric, text, answer)
        done[i] = time.perf_counter() - t0
        return s

    easy = [(f"\\boxed{{{n}/2}}", str(n / 2)) for n in range(1, 7)]
    slow = asyncio.ensure_future(timed(-1, f"\\boxed{{{PATHOLOGICAL}}}", "7"))
    await asyncio.sleep(0)  # the pathological grading takes a worker first
    states = await asyncio.gather(*(timed(i, t, a) for i, (t, a) in enumerate(easy)))
    bad = await slow
    assert [s["reward"] for s in states] == [1.0] * len(easy)
    assert bad["reward"] == 0.0 and bad["error"] is None
    assert bad["math_verify_timeout"] is True
    assert max(done[i] for i in range(len(easy))) < done[-1]  # not stuck behind it
    assert done[-1] < rubric.hard_timeout_seconds + 2.0


async def test_hard_kill_scores_zero_and_worker_is_replaced(rubric):
    await score(rubric, "\\boxed{1}", "1")
    before = set(rubric.pool.pids)
    rubric.hard_timeout_seconds = 0.3  # below the 1 s signal timeout: the kill fires first
    try:
        s = await score(rubric, f"\\boxed{{{PATHOLOGICAL}}}", "7")
    finally:
        rubric.hard_timeout_seconds = 3.0 * rubric.signal_timeout + 1.0
    assert s["reward"] == 0.0 and s["math_verify_timeout"] is True and s["error"] is None
    assert wait_gone(list(before - set(rubric.pool.pids)))
    states = await asyncio.gather(*(score(rubric, "\\boxed{0.25}", "1/4") for _ in range(3)))
    assert [x["reward"] for x in states] == [1.0] * 3
    assert set(rubric.pool.pids) != before


async def test_crashed_worker_is_an_infra_error_on_the_rollout(rubric):
    await asyncio.gather(*(score(rubric, "\\boxed{1}", "1") for _ in range(2)))
    pids = rubric.pool.pids
    task = asyncio.ensure_future(score(rubric, f"\\boxed{{{PATHOLOGICAL}}}", "7"))
    await asyncio.sleep(0.3)
    for pid in pids:  # the busy worker and the idle one
        os.kill(pid, signal.SIGKILL)
    s = await task
    assert math.isnan(s["reward"]) and math.isnan(s["metrics"]["correct_answer"])
    assert s["error"]["infra"] is True
    assert "WorkerCrashedError" in s["error"]["message"]
    assert "killed by SIGKILL" in s["error"]["message"]
    assert wait_gone(pids)
    time.sleep(0.1)  # the forkserver reports the exit status just after reaping
    # The idle worker that died is noticed and replaced, not handed a grading.
    states = await asyncio.gather(*(score(rubric, "\\boxed{2^{3}}", "8") for _ in range(4)))
    assert [x["reward"] for x in states] == [1.0] * 4
    assert not set(pids) & set(rubric.pool.pids)


# -- the pool -----------------------------------------------------------------------------
async def test_timeout_kills_only_that_worker(pool):
    await pool.start()
    results = await asyncio.gather(
        pool.run(time.sleep, 30, timeout=0.3),
        *(pool.run(math.factorial, n, timeout=5) for n in range(8)),
        return_exceptions=True,
    )
    assert isinstance(results[0], WorkerTimeoutError)
    assert "0.3 s timeout" in str(results[0]) and "killed" in str(results[0])
    assert results[1:] == [math.factorial(n) for n in range(8)]
    assert await pool.run(pow, 2, 10, timeout=5) == 1024  # replaced


@pytest.mark.parametrize(
    ("fn", "arg", "how"),
    [(os._exit, 3, "exit code 3"), (ctypes.string_at, 0, "killed by SIGSEGV")],
)
async def test_crashed_worker_is_a_clear_error_and_pool_recovers(pool, fn, arg, how):
    with pytest.raises(WorkerCrashedError, match=how) as info:
        await pool.run(fn, arg, timeout=10)
    assert isinstance(info.value, vf.InfraError)
    assert await pool.run(pow, 3, 2, timeout=10) == 9


async def test_worker_exceptions_are_reraised_with_remote_traceback(pool):
    with pytest.raises(ValueError, match="invalid literal") as info:
        await pool.run(int, "x")
    assert "Traceback" in str(info.value.__cause__)
    with pytest.raises(Exception, match="pickle"):
        await pool.run(lambda: 1)  # not picklable: fails before taking a worker
    assert await pool.run(abs, -4) == 4


async def test_cancelled_call_kills_its_worker_only(pool):
    task = asyncio.ensure_future(pool.run(time.sleep, 30))
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await asyncio.gather(*(pool.run(abs, -n) for n in range(4))) == [0, 1, 2, 3]


async def test_bounded_queue_and_close_leaves_no_processes():
    p = ProcessPool(size=1, max_queued=1)
    busy = asyncio.ensure_future(p.run(time.sleep, 30))
    await asyncio.sleep(0.5)
    queued = asyncio.ensure_future(p.run(abs, -1))
    await asyncio.sleep(0)
    with pytest.raises(PoolOverloadedError):
        await p.run(abs, -2)
    pids = p.pids
    assert pids
    p.close()
    for fut in (busy, queued):
        with pytest.raises(PoolClosedError):
            await fut
    with pytest.raises(PoolClosedError):
        await p.run(abs, -3)
    assert wait_gone(pids)
    assert not [c for c in multiprocessing.active_children() if c.pid in pids]


async def test_teardown_stops_the_rubric_workers():
    # Pools are shared per size in a process: a size no other test file uses, so that this
    # rubric is the pool's only holder whichever files ran before in this worker.
    r = MathRubric(max_workers=7, timeout_seconds=1)
    assert (await score(r, "\\boxed{2}", "2"))["reward"] == 1.0
    pids = r.pool.pids
    await r.teardown()
    assert pids and wait_gone(pids)
    assert (await score(r, "\\boxed{5}", "5"))["reward"] == 1.0  # a fresh pool on reuse
    await r.teardown()


# -- end to end ---------------------------------------------------------------------------
def test_single_turn_env_end_to_end():
    ds = Dataset.from_list(
        [{"question": f"What is {i} + {i + 2}?", "answer": str(2 * i + 2)} for i in range(4)]
    )
    env = vf.SingleTurnEnv(dataset=ds, rubric=MathRubric(max_workers=1))
    try:
        with ScriptedServer() as srv:
            out = env.evaluate_sync(srv.base_url, "m", num_examples=4)
    finally:
        asyncio.run(env.teardown())
    outputs = out["outputs"]
    assert len(outputs) == 4
    assert [o["reward"] for o in outputs] == [1.0] * 4
    assert all(o["metrics"]["correct_answer"] == 1.0 for o in outputs)


# -- no grading warm-up (issue 30 item 2) ---------------------------------------------------
FIRST_GRADES = r"""
import asyncio, json, sys
from verifiers.rubrics.math_rubric import MathRubric, shared_pools

def state(text, answer):
    prompt = [{"role": "user", "content": "Solve it."}]
    return {"prompt": prompt, "completion": [{"role": "assistant", "content": text}],
            "answer": answer, "info": {}, "task": None, "example_id": 0, "metrics": {},
            "error": None, "input": {"prompt": prompt, "answer": answer, "example_id": 0}}

async def main():
    r = MathRubric(max_workers=2, timeout_seconds=1)
    r.hard_timeout_seconds = 0.5  # below the 1 s signal timeout: only the kill can stop it
    other = MathRubric(max_workers=2)
    first = [state("\\boxed{" + sys.argv[1] + "}", "7"), state("\\boxed{\\frac{4}{8}}", "0.5")]
    # both sent at once, before the pool's workers are up: the first gradings of the process
    await asyncio.gather(r.score_rollout(first[0]), other.score_rollout(first[1]))
    after = state("\\boxed{2^{3}}", "8")
    await r.score_rollout(after)
    shared = other.pool is r.pool
    await other.teardown()
    alive_after_one = not r.pool.closed
    pool = r.pool
    await r.teardown()
    print(json.dumps({"first": [[s["reward"], s.get("math_verify_timeout"), s["error"]]
                                for s in first],
                      "after": after["reward"], "shared": shared,
                      "alive_after_one_teardown": alive_after_one, "closed": pool.closed}))

if __name__ == "__main__":
    asyncio.run(main())
"""


def test_first_gradings_of_a_fresh_process_are_right_and_the_kill_applies(tmp_path):
    """Issue 30 item 2: a process's first gradings, sent while its grading workers are
    still starting (a fresh interpreter, so a cold forkserver), grade correctly; a
    pathological first answer is still killed on its hard timeout (counted from when it
    runs, not from the wait for the workers), scores 0 with the timeout recorded, and the
    pool goes on. Rubrics of one size share one pool, which stops with its last holder."""
    script = tmp_path / "first_grades.py"
    script.write_text(FIRST_GRADES)
    out = subprocess.run(
        [sys.executable, str(script), PATHOLOGICAL],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["first"] == [[0.0, True, None], [1.0, None, None]]
    assert got["after"] == 1.0
    assert got == {**got, "shared": True, "alive_after_one_teardown": True, "closed": True}


async def test_prestarted_worker_serves_the_first_call():
    """`ProcessPool.prestart` starts a worker with no call and no event loop (once: it asks
    for at least n); the first call is served by that worker rather than one started for it."""
    p = ProcessPool(size=2, name="vf-test-prestart")
    try:
        p.prestart()
        p.prestart()  # one is already starting: no second worker
        deadline = time.monotonic() + 120
        while not p._idle and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        (prestarted,) = p.pids  # at least one was asked for, twice: one started
        assert await p.run(os.getpid, timeout=30) == prestarted
    finally:
        p.close()
    assert wait_gone([prestarted])


def test_a_grading_over_its_time_limit_scores_zero_as_a_timeout():
    """Upstream v0.3.0's test_timeout: a 100,000-digit answer equal to its gold scores 1 with
    timeout_seconds=10 and 0 with 0.1 (a grading that takes longer than timeout_seconds is a
    timeout, also below math-verify's whole-second alarms). Here in-process with 20,000
    digits: past Python's 4,300-digit int-string limit (the exact layer cannot read it, so
    math-verify decides) and long enough that a regex quadratic in the digits would hang."""
    from verifiers.rubrics.math_rubric import grade_math_answer

    digits = "1" * 20_000
    assert grade_math_answer(digits, digits, 10) == (1.0, False)
    assert grade_math_answer(digits, digits, 10, time_limit=0.001) == (0.0, True)
    r = MathRubric(max_workers=2, timeout_seconds=0.1)
    completion = [{"role": "assistant", "content": f"\\boxed{{{digits}}}"}]
    args = r.grading_args(completion, digits)
    asyncio.run(r.teardown())
    assert args is not None and args[2] == 1 and args[-1] == 0.1  # alarm: 1 s; limit: 0.1 s


async def test_rubric_pickles_without_its_pool_and_the_copy_shares_it(rubric):
    """A MathRubric is picklable (as before the pool was taken at construction): the copy
    drops the hold and takes this process's pool of its size on first use."""
    copy = pickle.loads(pickle.dumps(rubric))
    assert copy._pool is None
    assert (await score(copy, "\\boxed{0.75}", "\\frac{3}{4}"))["reward"] == 1.0
    assert copy.pool is rubric.pool
    await copy.teardown()
    assert not rubric.pool.closed  # the fixture still holds it


def test_verify_response_is_upstreams_in_process_grading(monkeypatch):
    """Upstream 0.3's `math_rubric.verify_response` (and the module's `parse`/`verify`, which
    its tests patch): bare math-verify in this process; errors and math-verify's timeout score
    0, a cancellation propagates (upstream v0.3.0 tests/test_math_rubric.py)."""
    from math_verify.errors import TimeoutException

    from verifiers.rubrics import math_rubric

    assert math_rubric.verify_response("\\frac{1}{2}", "0.5", 100)[0] == 1.0
    assert math_rubric.verify_response("3", "4", 100)[0] == 0.0
    assert math_rubric.verify_response("1" * 20, "1", 10)[0] == 0.0  # over max_verify_chars

    def raising(exc: BaseException):  # type: ignore[no-untyped-def]
        def parse(*args, **kwargs):  # type: ignore[no-untyped-def]
            raise exc

        return parse

    monkeypatch.setattr(math_rubric, "parse", raising(TimeoutException("slow")))
    assert math_rubric.verify_response("1", "1", 100)[0] == 0.0
    monkeypatch.setattr(math_rubric, "parse", raising(ValueError("bad")))
    assert math_rubric.verify_response("1", "1", 100)[0] == 0.0
    monkeypatch.setattr(math_rubric, "parse", raising(asyncio.CancelledError()))
    with pytest.raises(asyncio.CancelledError):
        math_rubric.verify_response("1", "1", 100)
