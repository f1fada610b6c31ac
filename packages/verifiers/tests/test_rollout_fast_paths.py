"""The rollout path's shortcuts (issue 30 item 1) answer exactly what the long way did.

Each shortcut skips a layer only when nothing can tell: a rubric class keeping the base
`available_for` / `score_available` is scored without them, a state holding the input's fields
is read with `dict.get`, a reward function's plain number skips `inspect`, the stop conditions
are awaited without a wrapper, `run_scored_group` hands back `run_group`'s coroutine. These
tests take the other side of each decision: where a subclass or a state can tell, the long
way still answers."""

from __future__ import annotations

import asyncio
import math

import verifiers as vf
from verifiers.rubrics.reward_calls import state_fields
from verifiers.rubrics.scores import Score
from verifiers.state import State
from verifiers.testing.environments import rollout_state


def exact(completion, answer) -> float:
    return float(completion[-1]["content"] == answer)


def cheap(funcs: list) -> vf.Rubric:
    rubric = vf.Rubric(funcs=funcs)
    rubric.sync_calls.slow_after_s = math.inf  # batched, whatever this machine measures
    rubric.sync_calls.inline_below_s = 0.0
    return rubric


def test_rubric_overrides_of_the_skipped_layers_still_answer():
    """A subclass overriding `available_for` (as JudgeRubric does), `score_available` or
    `compute_scores` is scored through its override; the base class takes the short way."""
    seen: list[str] = []

    class Extra(vf.Rubric):
        def available_for(self, state, *, input=None, **fields):
            seen.append("available_for")
            avail = super().available_for(state, input=input, **fields)
            avail["bonus"] = 0.5
            return avail

    class Doubled(vf.Rubric):
        async def score_available(self, avails):
            seen.append("score_available")
            scores = await super().score_available(avails)
            return [Score(2 * s.reward, s.metrics, s.error) for s in scores]

    class Tripled(vf.Rubric):
        async def compute_scores(self, states):
            seen.append("compute_scores")
            scores = await super().compute_scores(states)
            return [Score(3 * s.reward, s.metrics, s.error) for s in scores]

    def with_bonus(completion, answer, bonus) -> float:
        return exact(completion, answer) + bonus

    assert vf.Rubric._base_available and vf.Rubric._base_score_available
    assert not Extra._base_available and Extra._base_score_available
    assert Doubled._base_available and not Doubled._base_score_available

    async def score(rubric: vf.Rubric) -> float:
        rubric.sync_calls.slow_after_s = math.inf
        state = rollout_state("2+2?", "4", "4", task="t")
        await rubric.score_rollout(state)
        return state["reward"]

    assert asyncio.run(score(Extra(funcs=[with_bonus]))) == 1.5
    assert asyncio.run(score(Doubled(funcs=[exact]))) == 2.0
    assert asyncio.run(score(Tripled(funcs=[exact]))) == 3.0
    assert asyncio.run(score(cheap([exact]))) == 1.0
    assert seen == ["available_for", "score_available", "compute_scores"]
    assert not Tripled._base_compute_scores and vf.Rubric._base_compute_scores


def test_state_fields_fall_back_to_the_input_as_state_get_does():
    """`state_fields` reads a State holding the input's fields with `dict.get`; one lacking
    some answers them from `input`, as `State.get` does, and a plain dict as a dict."""
    row = {"prompt": [{"role": "user", "content": "q"}], "answer": "7", "task": "t", "info": {}}
    partial = State(input=row, completion=[])
    full = State(input=row, prompt=[], completion=[], answer="8", info={"k": 1}, task="u")
    full["example_id"] = 3
    assert state_fields(partial) == {
        "prompt": row["prompt"],
        "completion": [],
        "answer": "7",
        "info": {},
        "task": "t",
        "example_id": None,
        "input": row,
    }
    assert state_fields(full)["answer"] == "8" and state_fields(full)["example_id"] == 3
    assert state_fields({"completion": "x"})["answer"] == ""


def test_sync_reward_results_keep_their_types_and_coroutines_are_awaited():
    """A sync function's bool stays a plain number path; one returning a coroutine (a sync
    wrapper around an async judge) is still awaited."""

    def flag(completion) -> bool:
        return True

    def hidden(completion):
        async def verdict() -> float:
            return 0.25

        return verdict()

    rubric = cheap([flag, hidden])
    state = rollout_state("q", "a", "a", task="t")
    asyncio.run(rubric.score_rollout(state))
    assert state["metrics"] == {"flag": 1.0, "hidden": 0.25}
    assert state["reward"] == 1.25


def test_stop_conditions_appended_after_init_and_async_run_scored_group_override():
    """A condition appended to `_stop_conditions` after construction still ends rollouts
    (named as before), and a subclass overriding `run_scored_group` with `async def` is what
    `evaluate` runs groups through."""
    from datasets import Dataset

    calls: list[int] = []

    class Wrapped(vf.SingleTurnEnv):
        async def run_scored_group(self, rows, *args, **kwargs):
            calls.append(len(rows))
            return await super().run_scored_group(rows, *args, **kwargs)

    async def always(state) -> bool:
        return True

    env = Wrapped(dataset=Dataset.from_list([{"question": "q", "answer": "a"}] * 2))
    env._stop_conditions.insert(0, always)
    # stopped before any model turn: the client is never asked (nothing listens there)
    client = vf.OpenAIClient("http://127.0.0.1:9/v1", api_key="x")
    out = asyncio.run(env.evaluate(client, "m", num_examples=2, max_concurrent=2))
    assert calls == [1, 1]
    assert [o["stop_condition"] for o in out["outputs"]] == ["always", "always"]
    assert all(o["completion"] == [] and o["error"] is None for o in out["outputs"])


def test_an_overridden_built_in_stop_condition_is_awaited_not_its_plain_form():
    """The built-in conditions' plain forms stand in only for the base methods: a subclass
    overriding one as a `@vf.stop` condition (here `max_turns_reached`, ending every rollout
    before its first turn) is what the loop awaits."""
    from datasets import Dataset

    class Impatient(vf.SingleTurnEnv):
        @vf.stop
        async def max_turns_reached(self, state) -> bool:
            return True

    base = vf.SingleTurnEnv(dataset=Dataset.from_list([{"question": "q", "answer": "a"}]))
    env = Impatient(dataset=Dataset.from_list([{"question": "q", "answer": "a"}]))
    assert [c[2] is not None for c in base.stop_conditions._calls].count(False) == 0
    assert [c[2] is None for c in env.stop_conditions._calls].count(True) == 1
    assert env.stop_conditions.check_now({}) is None  # so the loop awaits `check`
    client = vf.OpenAIClient("http://127.0.0.1:9/v1", api_key="x")
    out = asyncio.run(env.evaluate(client, "m", num_examples=1, max_concurrent=1))
    assert out["outputs"][0]["stop_condition"] == "max_turns_reached"
    assert out["outputs"][0]["completion"] == []


def test_run_summary_sums_and_spreads_as_the_standard_library_does():
    """`summarize` adds token usage with a plain loop and takes the reward spread with two
    `math.fsum` passes (issue 30 item 1: `Counter.update` and `statistics.pstdev` cost about
    a microsecond per rollout each); the figures are the standard library's."""
    import random
    import statistics
    from collections import Counter

    from verifiers.results import summarize

    rng = random.Random(7)
    outputs = [
        {
            "example_id": i // 3,
            "reward": rng.random() * 1e6 + 1e9,  # a large offset: naive sums lose digits
            "token_usage": {"prompt_tokens": rng.randint(1, 99), "completion_tokens": i},
        }
        for i in range(3000)
    ]
    summary = summarize(outputs)
    rewards = [o["reward"] for o in outputs]
    assert math.isclose(summary["std_reward"], statistics.pstdev(rewards), rel_tol=1e-12)
    usage: Counter[str] = Counter()
    for o in outputs:
        usage.update(o["token_usage"])
    assert summary["usage"] == dict(usage)
    assert summarize(outputs[:1])["std_reward"] == 0.0
