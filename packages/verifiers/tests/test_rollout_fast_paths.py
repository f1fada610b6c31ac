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


# -- the single-rollout paths (issue 30 item 1, second cut) ------------------------------------


def _same(a: object, b: object) -> bool:
    """Equal, NaN equal to NaN (scores and metrics compare with their NaNs)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return a == b


def test_one_rollout_scored_directly_answers_what_the_table_path_does():
    """`score_single` (one rollout, individual functions, one coroutine) against
    `run_reward_funcs` (the table every group goes through), function by function: sync and
    async, bool/int results, a non-number, a plain failure, an infrastructure failure (the
    rollout's later functions are skipped as NaN), a name used twice, a zero-weight NaN."""
    from verifiers.errors import InfraError
    from verifiers.rubrics.reward_calls import run_reward_funcs, score_single
    from verifiers.rubrics.reward_registry import RewardRegistry
    from verifiers.rubrics.sync_calls import SyncCalls

    def ok(completion) -> float:
        return 0.5

    async def later(answer) -> int:
        return 1

    def flag(**kwargs) -> bool:
        return "state" in kwargs

    def words(completion) -> str:
        return "many"

    def broken(prompt) -> float:
        raise ValueError("bad input")

    def judge_down(answer) -> float:
        raise InfraError("judge unreachable")

    def nan_metric() -> float:
        return math.nan

    plans = {
        "plain": ([ok, later, flag, nan_metric], [1.0, 2.0, 0.5, 0.0]),
        "failures": ([broken, ok, words, later], [1.0, 1.0, 1.0, 1.0]),
        "infra first": ([judge_down, ok, broken, later], [1.0, 1.0, 1.0, 0.0]),
        "infra after a failure": ([broken, judge_down, later], [1.0, 1.0, 1.0]),
        "a name twice": ([ok, later, ok], [1.0, 1.0, 3.0]),
    }
    for name, (funcs, weights) in plans.items():
        specs = RewardRegistry().specs(funcs, weights)
        avail = {"prompt": [], "completion": [], "answer": "4", "state": {}, "info": {}}

        async def both(specs=specs, avail=avail) -> tuple[Score, Score]:
            direct = await score_single(specs, dict(avail), SyncCalls(_logger()), None)
            (table,) = await run_reward_funcs(
                specs, [dict(avail)], lambda a: {}, SyncCalls(_logger()), None
            )
            return direct, table

        direct, table = asyncio.run(both())
        assert _same(direct.reward, table.reward), name
        assert _same(direct.metrics, table.metrics), name
        assert (direct.error is None) == (table.error is None), name
        if direct.error is not None:
            assert direct.error == table.error, name


def _logger():  # type: ignore[no-untyped-def]
    import logging

    return logging.getLogger("test_rollout_fast_paths")


def test_a_rubric_with_a_group_function_scores_one_rollout_the_long_way():
    """`score_rollout(state)` on a rubric holding a group function (scored as a group of
    one) is not taken by the single path, which scores individual functions only."""

    def per_rollout(completion, answer) -> float:
        return exact(completion, answer)

    def group_size(completions) -> list[float]:
        return [float(len(completions))] * len(completions)

    rubric = cheap([per_rollout, group_size])
    state = rollout_state("2+2?", "4", "4", task="t")
    asyncio.run(rubric.score_rollout(state))
    assert rubric.reward_registry.has_group
    assert state["metrics"] == {"per_rollout": 1.0, "group_size": 1.0}
    assert state["reward"] == 2.0


def test_the_parser_reads_the_last_assistant_message_as_its_helpers_do():
    """`Parser.parse_answer` reads the last assistant message itself for a class keeping the
    base message helpers; a subclass overriding one (here `_message_field`, answering the
    same) goes the long way, and both agree on every shape of completion."""
    from types import SimpleNamespace

    class LongWay(vf.Parser):
        def _message_field(self, message, field, default=None):  # type: ignore[no-untyped-def]
            return super()._message_field(message, field, default)

    class Quoting(vf.Parser):  # a helper override is honoured
        def _message_text(self, message) -> str:  # type: ignore[no-untyped-def]
            return f"<{super()._message_text(message)}>"

    assert vf.Parser._base_helpers and not LongWay._base_helpers
    completions = [
        "plain text",
        [],
        [{"role": "user", "content": "q"}],
        [{"role": "assistant", "content": "first"}, {"role": "assistant", "content": "last"}],
        [{"role": "assistant", "content": "answer"}, {"role": "tool", "content": "t"}],
        [{"role": "assistant", "content": None, "tool_calls": []}],
        [{"role": "assistant"}],
        [{"role": "assistant", "content": [{"type": "text", "text": " a "}, {"type": "x"}]}],
        [{"role": "assistant", "content": 7}],
        [SimpleNamespace(role="assistant", content="from an object"), {"role": "user"}],
        [SimpleNamespace(role="user", content="no"), SimpleNamespace(content="no role")],
    ]
    for completion in completions:
        assert vf.Parser().parse_answer(completion) == LongWay().parse_answer(completion)
    assert Quoting().parse_answer([{"role": "assistant", "content": "x"}]) == "<x>"
    boxed = vf.Parser(extract_fn=vf.extract_boxed_answer)
    assert boxed.parse_answer([{"role": "assistant", "content": "so \\boxed{12}."}]) == "12"


def test_the_summary_is_the_one_of_separate_passes():
    """`summarize` in one pass (issue 30 item 1) against the figures taken one by one:
    errors counted by type in first-seen order, the first error, metrics over finite values
    only, pass@k over groups of four with NaN rewards, and no means when nothing scored."""
    import statistics

    from verifiers.results import pass_at_k, summarize

    outputs = []
    for i in range(24):
        reward = [1.0, 0.0, math.nan, 0.5][i % 4] if i % 7 else 1.0
        error = (
            {"error": ["ModelError", "RewardError"][i % 2], "message": f"m{i}"}
            if i % 5 == 3
            else None
        )
        outputs.append(
            {
                "example_id": i // 4,
                "reward": reward,
                "error": error,
                "metrics": {"m": reward, "n": float(i)} if i % 3 else {"n": math.inf},
            }
        )
    s = summarize(outputs, pass_threshold=0.5)
    scored = [o for o in outputs if not o["error"] and math.isfinite(o["reward"])]
    finite = [o["reward"] for o in outputs if math.isfinite(o["reward"])]
    assert s["scored_rollouts"] == len(scored) and s["num_rollouts"] == 24
    assert s["avg_reward"] == statistics.fmean(finite)
    assert s["errors"] == {"RewardError": 3, "ModelError": 2}
    assert list(s["errors"]) == ["RewardError", "ModelError"]  # first seen first (i=3, 8)
    assert s["first_error"] == "RewardError: m3"
    ms = [o["metrics"]["m"] for o in outputs if math.isfinite(o["metrics"].get("m", math.nan))]
    ns = [o["metrics"]["n"] for o in outputs if math.isfinite(o["metrics"]["n"])]
    assert s["avg_metrics"] == {"m": statistics.fmean(ms), "n": statistics.fmean(ns)}
    for k in (1, 2, 4):
        groups = [[o["reward"] for o in outputs if o["example_id"] == e] for e in range(6)]
        want = statistics.fmean(pass_at_k(4, sum(r >= 0.5 for r in g), k) for g in groups)
        assert s["pass_at_k"][str(k)] == want
    assert set(s["pass_at_k"]) == {"1", "2", "4"}
    failed = summarize([{"example_id": 0, "reward": 0.0, "error": {"error": "E"}}])
    assert math.isnan(failed["avg_reward"]) and failed["pass_at_k"] == {}


def test_hooks_given_to_the_instance_or_a_subclass_are_still_called(server):
    """The loop does the base `init_state` / `setup_state` / `is_completed` /
    `add_model_response` / cleanup work without their coroutines; a hook set on the instance,
    a cleanup handler appended after construction and a subclass's `render_completion` are
    still what runs, and a failing plain cleanup is recorded as the long way records it."""
    from datasets import Dataset

    calls: list[str] = []
    rows = Dataset.from_list([{"question": "What is 2 + 3?", "answer": "5"}])
    env = vf.SingleTurnEnv(dataset=rows)
    base_init, base_add = env.init_state, env.add_model_response

    async def init_state(*args):  # type: ignore[no-untyped-def]
        calls.append("init_state")
        return await base_init(*args)

    async def setup_state(state):  # type: ignore[no-untyped-def]
        calls.append("setup_state")

    async def add_model_response(*args):  # type: ignore[no-untyped-def]
        calls.append("add_model_response")
        await base_add(*args)

    async def is_completed(state):  # type: ignore[no-untyped-def]
        calls.append("is_completed")
        return len(state["trajectory"]) >= 1

    def late_handler(state):  # type: ignore[no-untyped-def]
        calls.append("late cleanup")

    env.init_state, env.setup_state = init_state, setup_state
    env.add_model_response, env.is_completed = add_model_response, is_completed
    env._cleanup_handlers.append(late_handler)
    client = vf.OpenAIClient(server.base_url, api_key="x")
    out = asyncio.run(env.evaluate(client, "m", num_examples=1))["outputs"][0]
    assert calls == [
        "init_state",
        "setup_state",
        "is_completed",
        "add_model_response",
        "is_completed",
        "late cleanup",
    ]
    assert out["completion"][-1]["content"] and out["reward"] == 0.0  # no reward functions

    class Broken(vf.SingleTurnEnv):
        def render_completion(self, state):  # type: ignore[no-untyped-def]
            raise RuntimeError("cannot render")

    broken = Broken(dataset=rows)
    out = asyncio.run(broken.evaluate(client, "m", num_examples=1))["outputs"][0]
    assert out["error"]["stage"] == "cleanup" and "cannot render" in out["error"]["message"]


def test_a_group_of_one_gets_the_advantage_the_group_formula_gives():
    """`set_advantages` for one state: 0.0 (a float, also for an int reward) beside a finite
    reward, NaN beside NaN or None, and the steps take both when they have none."""
    from verifiers.rubrics.scores import set_advantages

    for reward, want in [(1, 0.0), (0.25, 0.0), (math.nan, math.nan), (None, math.nan)]:
        one = {"reward": reward, "trajectory": [{"advantage": None, "reward": None}]}
        set_advantages([one])
        assert _same(one["advantage"], want) and type(one["advantage"]) is float
        assert _same(one["trajectory"][0]["advantage"], want)
        assert one["trajectory"][0]["reward"] is reward


def test_folded_stop_checks_name_the_condition_the_ordered_check_names():
    """The built-in conditions are asked in one call while none holds (`fold_stop_forms`):
    whichever of them holds, `check_now` ends the rollout as the ordered `check` does, with
    the same name, and answers False on the same states."""
    from datasets import Dataset

    rows = Dataset.from_list([{"question": "q", "answer": "a"}])
    step = {"prompt": [], "completion": [], "is_truncated": False}
    cases = [
        {},
        {"error": ValueError("x")},
        {"final_env_response": []},
        {"prompt_too_long": True},
        {"trajectory": [step, step]},
        {"trajectory": [step]},
        {"usage": {"input_tokens": 0, "output_tokens": 50}},
        {"error": ValueError("x"), "trajectory": [step, step]},
    ]
    envs = [
        vf.MultiTurnEnv(dataset=rows, max_turns=2, max_total_completion_tokens=40),
        vf.SingleTurnEnv(dataset=rows),
        vf.MultiTurnEnv(dataset=rows, max_turns=-1),
    ]
    for env in envs:
        assert env.stop_conditions._folded is not None
        for case in cases:
            states = [env.new_state({"question": "q"}, None, "m") for _ in range(2)]
            for s in states:
                s.update({k: list(v) if isinstance(v, list) else v for k, v in case.items()})
            now = env.stop_conditions.check_now(states[0])
            awaited = asyncio.run(env.stop_conditions.check(states[1]))
            assert now == awaited, (env, case)
            assert states[0].get("stop_condition") == states[1].get("stop_condition")


def test_a_condition_that_raises_inside_a_fold_raises_from_the_ordered_check():
    """A state a built-in condition cannot read (no `trajectory`) is checked one by one, in
    order, when the fold raises: the error is the first failing condition's own."""
    from datasets import Dataset

    env = vf.SingleTurnEnv(dataset=Dataset.from_list([{"question": "q", "answer": "a"}]))
    try:
        env.stop_conditions.check_now(State())
    except KeyError as e:
        assert e.args == ("trajectory",)
    else:
        raise AssertionError("no KeyError")


def test_a_reply_is_parsed_the_same_with_or_without_token_fields():
    """`parse_chat_completion` skips the token reader when the choice has neither token ids
    nor logprobs; with either, both are read as before. Its message is an
    `AssistantMessage` equal, key order included, to one built by the constructor."""
    from verifiers.messages import AssistantMessage, assistant_message
    from verifiers.openai_wire import parse_chat_completion

    built = assistant_message("hi")
    assert type(built) is AssistantMessage and built.content == "hi"
    assert list(built.items()) == list(AssistantMessage(content="hi").items())

    def reply(**choice) -> dict:
        message = {"role": "assistant", "content": "hi"}
        return {"id": "r", "model": "m", "choices": [{"message": message, **choice}]}

    plain = parse_chat_completion(reply(logprobs=None, finish_reason="length"))
    assert (plain.completion_ids, plain.completion_logprobs, plain.prompt_ids) == (None,) * 3
    assert plain.usage == {"input_tokens": 0, "output_tokens": 0} and plain.is_truncated
    ids = parse_chat_completion({**reply(token_ids=[5, 6]), "prompt_token_ids": [1]})
    assert (ids.completion_ids, ids.prompt_ids, ids.completion_logprobs) == ([5, 6], [1], None)
    content = [{"token": "token_id:9", "logprob": -0.5}]
    lps = parse_chat_completion(reply(logprobs={"content": content}))
    assert (lps.completion_ids, lps.completion_logprobs) == ([9], [-0.5])
    empty_ids = parse_chat_completion(reply(token_ids=[]))
    assert empty_ids.completion_ids == [] and empty_ids.prompt_ids is None
    tagged = parse_chat_completion(
        {**reply(), "usage": {"prompt_tokens": 4}, "policy_version": "3"}
    )
    assert tagged.usage == {"input_tokens": 4, "output_tokens": 0}
    assert tagged.policy_version == 3 and tagged.summary()["policy_version"] == 3


def test_eval_inputs_hand_out_new_rows_each_call():
    """`eval_inputs` indexes the rows it just built in place: rows of one call are not the
    rows of another, and the dataset is untouched."""
    from datasets import Dataset

    env = vf.SingleTurnEnv(dataset=Dataset.from_list([{"question": "q", "answer": "a"}] * 2))
    first = env.eval_inputs(2)
    assert [r["rollout_index"] for r in first] == [0, 0]
    first[0]["answer"] = "changed"
    second = env.eval_inputs(2)
    assert second[0]["answer"] == "a" and second[0] is not first[0]
    assert "rollout_index" not in env.get_eval_dataset().column_names


def test_environments_score_through_a_score_rollout_someone_overrode():
    """An environment scores a base rubric's rollouts without `score_rollout`'s layer
    (`direct_scoring`) and records the scoring time itself; a subclass's `score_rollout`,
    one set on the instance, and a group reward function still go through
    `score_rollout`, and every state ends with the same reward, metrics and timing keys."""
    from datasets import Dataset

    from verifiers.rubrics.rubric import direct_scoring

    seen: list[str] = []

    class Counted(vf.Rubric):
        async def score_rollout(self, *args, **kwargs):
            seen.append("subclass")
            return await super().score_rollout(*args, **kwargs)

    def grouped(completions, answers) -> list[float]:
        return [exact(c, a) for c, a in zip(completions, answers, strict=True)]

    on_instance = cheap([exact])
    original = on_instance.score_rollout

    async def spy(*args, **kwargs):
        seen.append("instance")
        return await original(*args, **kwargs)

    on_instance.score_rollout = spy  # type: ignore[method-assign]
    rubrics = [cheap([exact]), Counted(funcs=[exact]), on_instance, vf.Rubric(funcs=[grouped])]
    scoring = direct_scoring(rubrics[0], State())
    assert scoring is not None
    scoring.close()  # type: ignore[attr-defined]
    assert [direct_scoring(r, State()) for r in rubrics[1:3]] == [None, None]
    rows = Dataset.from_list([{"question": "q", "answer": "4"}])
    for rubric in rubrics:
        rubric.sync_calls.slow_after_s = math.inf
        env = vf.SingleTurnEnv(dataset=rows, rubric=rubric)
        state = rollout_state("2+2?", "4", "4", task="t")
        state["timing"] = {"generation_ms": 1.0}
        asyncio.run(env.score_states([state], group=False))
        assert state["reward"] == 1.0 and list(state["metrics"]) in (["exact"], ["grouped"])
        timing = state["timing"]
        assert timing["scoring"] > 0 and timing["scoring_ms"] == timing["scoring"] * 1000
    assert seen == ["subclass", "instance"]


def test_a_completion_rendered_from_the_last_turn_alone_is_the_one_cut_from_the_whole():
    """`render_completion` takes a turn sent the prompt itself (single-turn) from that turn
    alone; every state gives what cutting the prompt off the whole conversation gives."""
    from verifiers.envs.trajectory import render_completion

    prompt = [{"role": "user", "content": "q"}]
    reply = [{"role": "assistant", "content": "a"}]
    later = [*prompt, *reply, {"role": "user", "content": "more"}]
    cases = []
    for final in (None, [], [{"role": "user", "content": "end"}], {"role": "tool"}, ("x",)):
        cases.append((prompt, [{"prompt": prompt, "completion": reply}], final))
        cases.append((prompt, [{"prompt": list(prompt), "completion": reply}], final))
        cases.append((prompt, [{"prompt": later, "completion": reply}], final))
    cases.append(("q", [{"prompt": "q", "completion": " a"}], " end"))
    for prompt_, trajectory, final in cases:
        state = State(prompt=prompt_, trajectory=trajectory, final_env_response=final)
        render_completion(state)
        last = trajectory[-1]
        if isinstance(prompt_, str):
            expected = last["completion"] + final
        else:
            whole = [*last["prompt"], *last["completion"]]
            if final:
                whole = whole + (final if isinstance(final, list) else [final])
            expected = whole[len(prompt_) :]
        assert state["completion"] == expected, (trajectory, final)
        assert state["completion"] is not last["completion"]
