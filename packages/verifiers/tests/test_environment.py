import asyncio
import math
import signal
import threading

import pytest
from datasets import Dataset
from openai import AsyncOpenAI

import verifiers as vf
from verifiers.testing import Fault, Reply, ScriptedServer, SequenceResponder, encode_chat
from verifiers.training import TOKEN_SAMPLING_ARGS


def arithmetic_dataset(n=4):
    return Dataset.from_list(
        [{"question": f"What is {i} + {i + 1}?", "answer": str(2 * i + 1)} for i in range(n)]
    )


def correct(completion, answer) -> float:
    return 1.0 if vf.extract_boxed_answer(completion[-1]["content"]) == answer else 0.0


def single_turn(**kw):
    kw.setdefault("dataset", arithmetic_dataset())
    kw.setdefault("rubric", vf.Rubric(funcs=[correct]))
    return vf.SingleTurnEnv(**kw)


def client_for(srv):
    return vf.OpenAIClient(srv.base_url, api_key="x", retry_base_delay=0.01)


# -- datasets ----------------------------------------------------------------------------
def test_question_becomes_prompt_with_system_and_few_shot():
    few = [{"role": "user", "content": "1+1?"}, {"role": "assistant", "content": "2"}]
    env = single_turn(system_prompt="Be brief.", few_shot=few)
    row = env.get_dataset()[0]
    assert row["prompt"][0] == {"role": "system", "content": "Be brief."}
    assert row["prompt"][1:3] == few
    assert row["prompt"][-1] == {"role": "user", "content": "What is 0 + 1?"}
    assert env.get_dataset()["example_id"] == [0, 1, 2, 3]


def test_existing_prompt_gets_system_prompt_once():
    ds = Dataset.from_list(
        [
            {"prompt": [{"role": "user", "content": "hi"}], "answer": ""},
            {
                "prompt": [{"role": "system", "content": "own"}, {"role": "user", "content": "x"}],
                "answer": "",
            },
        ]
    )
    env = single_turn(dataset=ds, system_prompt="S")
    prompts = env.get_dataset()["prompt"]
    assert prompts[0][0]["content"] == "S" and len(prompts[0]) == 2
    assert prompts[1][0]["content"] == "own" and len(prompts[1]) == 2


def test_string_example_ids_move_to_src_id():
    ds = Dataset.from_list([{"question": "q", "example_id": "abc"}])
    env = single_turn(dataset=ds)
    row = env.get_dataset()[0]
    assert row["src_id"] == "abc" and row["example_id"] == 0


def test_dataset_without_prompt_or_question():
    with pytest.raises(vf.ConfigError, match="neither a 'prompt' nor a 'question'.*text"):
        single_turn(dataset=Dataset.from_list([{"text": "hello"}]))


def test_dataset_builder_is_lazy():
    built = []

    def builder():
        built.append(1)
        return arithmetic_dataset(2)

    env = single_turn(dataset=builder)
    assert not built
    assert len(env.get_dataset()) == 2 and built == [1]
    assert len(env.get_eval_dataset()) == 2  # falls back to the train set


def test_needs_some_dataset():
    with pytest.raises(vf.ConfigError, match="needs a dataset"):
        vf.SingleTurnEnv()


def test_no_signal_handlers_and_constructible_off_main_thread():
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    errors = []

    def build():
        try:
            single_turn()
        except Exception as e:
            errors.append(e)

    t = threading.Thread(target=build)
    t.start()
    t.join()
    single_turn()
    assert not errors
    assert {s: signal.getsignal(s) for s in before} == before


# -- rollouts ------------------------------------------------------------------------------
def test_evaluate_with_bare_async_openai(server):
    env = single_turn()
    oai = AsyncOpenAI(base_url=server.base_url, api_key="x")
    results = env.evaluate_sync(oai, "mock", num_examples=4, rollouts_per_example=2)
    outputs = results["outputs"]
    assert len(outputs) == 8
    assert [(o["example_id"], o["rollout_index"]) for o in outputs] == [
        (i, j) for i in range(4) for j in range(2)
    ]
    assert all(o["reward"] == 1.0 and o["error"] is None for o in outputs)
    assert outputs[0]["completion"][0]["role"] == "assistant"
    # a single-turn answer completed the rollout (upstream says max_turns_reached; issue 27)
    assert outputs[0]["stop_condition"] == "single_turn_completed"
    assert outputs[0]["metrics"] == {"correct": 1.0, "num_turns": 1.0}
    assert results["metadata"]["avg_reward"] == 1.0
    assert results["metadata"]["pass_at_k"] == {"1": 1.0, "2": 1.0}
    # column-wise access of the dict-era API
    assert results.reward == [1.0] * 8


def test_info_as_json_string_and_legacy_task_column(server):
    seen = []

    def check(info, task) -> float:
        seen.append((info, task))
        return 1.0

    ds = Dataset.from_list([{"question": "1 + 1", "info": '{"k": 3}', "task": "math"}])
    env = vf.SingleTurnEnv(dataset=ds, rubric=vf.Rubric(funcs=[check]))
    env.evaluate_sync(client_for(server), "mock", num_examples=1)
    assert seen == [({"k": 3}, "math")]


def test_sampling_args_are_merged_into_the_request(server):
    env = single_turn(sampling_args={"temperature": 0.3, "extra_body": {"top_k": 5}})
    env.evaluate_sync(
        client_for(server),
        "mock",
        num_examples=1,
        sampling_args={"max_tokens": 64, "extra_body": {"min_p": 0.1}},
    )
    body = server.requests[-1]
    assert body["temperature"] == 0.3 and body["max_tokens"] == 64
    assert body["top_k"] == 5 and body["min_p"] == 0.1
    assert "n" not in body and "extra_body" not in body


class Echo(vf.MultiTurnEnv):
    async def env_response(self, messages, state, **kwargs):
        return [{"role": "user", "content": f"turn {len(state['trajectory'])}"}]


def test_multiturn_max_turns_and_completion_rendering(server):
    env = Echo(
        dataset=arithmetic_dataset(1),
        max_turns=3,
        rubric=vf.Rubric(funcs=[lambda completion: len(completion)]),
    )
    out = env.evaluate_sync(client_for(server), "m", num_examples=1)["outputs"][0]
    roles = [m["role"] for m in out["completion"]]
    assert roles == ["assistant", "user", "assistant", "user", "assistant"]
    assert out["completion"][1]["content"] == "turn 1"
    assert out["stop_condition"] == "max_turns_reached"
    assert out["metrics"]["num_turns"] == 3.0


class Crashy(vf.MultiTurnEnv):
    async def env_response(self, messages, state, **kwargs):
        if state["example_id"] == 1:
            raise KeyError("missing_board")
        return [{"role": "user", "content": "go on"}]


def test_env_response_exception_is_recorded_not_fatal(server):
    env = Crashy(dataset=arithmetic_dataset(3), max_turns=2, rubric=vf.Rubric(funcs=[correct]))
    outputs = env.evaluate_sync(client_for(server), "m", num_examples=3)["outputs"]
    assert [o["error"] is None for o in outputs] == [True, False, True]
    err = outputs[1]["error"]
    assert err["error"] == "KeyError" and "missing_board" in err["message"]
    assert err["stage"] == "env_response" and err["infra"] is False
    assert "test_environment.py" in err["where"]
    assert outputs[1]["stop_condition"] == "has_error"
    assert len(outputs[1]["completion"]) == 1  # the finished model turn is kept


class BadSetup(vf.SingleTurnEnv):
    async def setup_state(self, state, **kwargs):
        raise ValueError("no board for this example")


def test_setup_state_exception_is_recorded(server):
    env = BadSetup(dataset=arithmetic_dataset(2), rubric=vf.Rubric(funcs=[correct]))
    outputs = env.evaluate_sync(client_for(server), "m", num_examples=2)["outputs"]
    assert all(o["error"]["stage"] == "setup_state" for o in outputs)
    assert server.request_count == 0


def test_model_errors_are_recorded_and_marked_infra():
    with ScriptedServer(faults=[Fault(status=500, times=None, match="0 \\+ 1")]) as srv:
        env = single_turn()
        client = vf.OpenAIClient(srv.base_url, max_retries=1, retry_base_delay=0.01)
        outputs = env.evaluate_sync(client, "m", num_examples=2)["outputs"]
    assert outputs[0]["error"]["error"] == "ModelConnectionError"
    assert outputs[0]["error"]["infra"] is True and outputs[0]["error"]["stage"] == "model"
    assert outputs[1]["error"] is None and outputs[1]["reward"] == 1.0


def test_transient_faults_are_retried_inside_rollouts():
    with ScriptedServer(faults=[Fault(status=429, times=3)]) as srv:
        outputs = single_turn().evaluate_sync(client_for(srv), "m", num_examples=4)["outputs"]
    assert all(o["error"] is None and o["reward"] == 1.0 for o in outputs)


def test_rollout_retries_on_invalid_model_response():
    replies = SequenceResponder([Reply(raw={"choices": []}), "The answer is \\boxed{1}."])
    with ScriptedServer(replies) as srv:
        env = single_turn(dataset=arithmetic_dataset(1))
        first = env.evaluate_sync(client_for(srv), "m", num_examples=1)["outputs"][0]
        assert first["error"]["error"] == "EmptyModelResponseError"
    with ScriptedServer(
        SequenceResponder([Reply(raw={"choices": []}), "The answer is \\boxed{1}."])
    ) as srv:
        env = single_turn(dataset=arithmetic_dataset(1))
        out = env.evaluate_sync(client_for(srv), "m", num_examples=1, max_retries=1)["outputs"][0]
        assert out["error"] is None and out["reward"] == 1.0


def test_timeout_keeps_partial_state():
    with ScriptedServer(latency_ms=300) as srv:
        env = Echo(dataset=arithmetic_dataset(1), max_turns=10, timeout_seconds=0.5)
        out = env.evaluate_sync(client_for(srv), "m", num_examples=1)["outputs"][0]
    assert out["stop_condition"] == "timeout_reached"
    assert out["completion"] and out["completion"][0]["role"] == "assistant"


def one_output_with_tokens(env, server) -> dict:
    """The output of `env`'s first example, sampled with token ids asked for (as trainers do)."""
    result = env.evaluate_sync(
        client_for(server), "m", num_examples=1, sampling_args=TOKEN_SAMPLING_ARGS
    )
    return result["outputs"][0]


def test_token_data_recorded_for_trainers(server):
    out = one_output_with_tokens(Echo(dataset=arithmetic_dataset(1), max_turns=2), server)
    steps = out["trajectory"]
    assert len(steps) == 2
    for step in steps:
        tokens = step["tokens"]
        assert tokens["prompt_ids"] == encode_chat(step["prompt"])
        assert (
            len(tokens["completion_ids"])
            == len(tokens["completion_logprobs"])
            == len(tokens["completion_mask"])
        )
        assert set(tokens["prompt_mask"]) == {0} and set(tokens["completion_mask"]) == {1}
    # turn 2 extends turn 1 (what a trainer needs to interleave samples)
    first, second = steps[0]["tokens"], steps[1]["tokens"]
    prefix = first["prompt_ids"] + first["completion_ids"]
    assert second["prompt_ids"][: len(prefix)] == prefix


def test_max_seq_len_truncates_tokens(server):
    env = single_turn(dataset=arithmetic_dataset(1), max_seq_len=5)
    tokens = one_output_with_tokens(env, server)["trajectory"][0]["tokens"]
    assert tokens["overlong_prompt"] is True
    assert tokens["completion_ids"] == [] and tokens["is_truncated"] is True


class DictEra(vf.MultiTurnEnv):
    """0.1.x style: is_completed(messages, state) and env_response returning (messages, state)."""

    def is_completed(self, messages, state, **kwargs):
        return sum(1 for m in messages if m["role"] == "assistant") >= 2

    def env_response(self, messages, state, **kwargs):
        state["seen"] = state.get("seen", 0) + 1
        return [{"role": "user", "content": "again"}], state


def test_dict_era_multiturn_env(server):
    env = DictEra(
        dataset=arithmetic_dataset(1), rubric=vf.Rubric(funcs=[lambda state: state["seen"]])
    )
    out = env.evaluate_sync(client_for(server), "m", num_examples=1)["outputs"][0]
    assert out["error"] is None
    assert out["stop_condition"] == "is_completed"
    assert out["metrics"]["num_turns"] == 2.0 and out["reward"] == 1.0


def test_concurrency_is_bounded_per_rollout(in_flight):
    async def responder(body):
        await in_flight.hold(0.02)
        return "The answer is \\boxed{0}."

    with ScriptedServer(responder) as srv:
        env = single_turn(dataset=arithmetic_dataset(10))
        env.evaluate_sync(
            client_for(srv), "m", num_examples=10, rollouts_per_example=3, max_concurrent=4
        )
    assert in_flight.peak == 4


def test_generate_with_list_and_column_inputs(server):
    env = single_turn()
    rows = [
        {"prompt": [{"role": "user", "content": "What is 2 + 2?"}], "answer": "4", "example_id": 7}
    ]
    out = env.generate_sync(rows, client_for(server), "m")
    assert out["outputs"][0]["reward"] == 1.0 and out["outputs"][0]["example_id"] == 7
    cols = {"prompt": [rows[0]["prompt"]], "answer": ["4"]}
    assert env.generate_sync(cols, client_for(server), "m").reward == [1.0]


def test_generate_inside_running_loop(server):
    env = single_turn(dataset=arithmetic_dataset(1))

    async def notebook_cell():
        return env.evaluate_sync(client_for(server), "m", num_examples=1)

    assert asyncio.run(notebook_cell())["outputs"][0]["reward"] == 1.0


def test_unknown_reward_parameter_is_a_reward_error_on_each_rollout(server, caplog):
    """Upstream 0.3.1 runs the rollouts and logs the reward function's failure; here each
    rollout records it (reward NaN) and the run is warned once, before any request."""

    def needs(completion, difficulty) -> float:
        return 0.0

    env = single_turn(rubric=vf.Rubric(funcs=[needs]))
    out = env.evaluate_sync(client_for(server), "m", num_examples=2)["outputs"]
    assert "'difficulty'" in caplog.text
    assert server.request_count == 2
    assert all(math.isnan(o["reward"]) and o["error"]["error"] == "RewardError" for o in out)


def test_reward_error_marks_rollout_and_run_continues(server):
    def flaky(example_id) -> float:
        if example_id == 0:
            raise ZeroDivisionError("boom")
        return 1.0

    env = single_turn(rubric=vf.Rubric(funcs=[flaky]))
    out = env.evaluate_sync(client_for(server), "m", num_examples=2)
    assert (
        math.isnan(out["outputs"][0]["reward"])
        and out["outputs"][0]["error"]["error"] == "RewardError"
    )
    assert out["outputs"][1]["reward"] == 1.0
    assert out["metadata"]["errors"] == {"RewardError": 1}


class WithCleanup(vf.SingleTurnEnv):
    cleaned: list

    @vf.cleanup
    async def release(self, state):
        self.cleaned.append((state["example_id"], state["error"] is not None))

    @vf.cleanup(priority=5)
    def sync_release(self, state):
        self.cleaned.append(("sync", threading.current_thread() is threading.main_thread()))


def test_cleanup_handlers_run_after_success_and_failure():
    with ScriptedServer(faults=[Fault(status=400, times=None, match="0 \\+ 1")]) as srv:
        env = WithCleanup(dataset=arithmetic_dataset(2), rubric=vf.Rubric(funcs=[correct]))
        env.cleaned = []
        env.evaluate_sync(client_for(srv), "m", num_examples=2)
    assert sorted(c for c in env.cleaned if c[0] != "sync") == [(0, True), (1, False)]
    assert [c for c in env.cleaned if c[0] == "sync"] == [("sync", False)] * 2


def test_broken_tool_call_json_is_kept_not_fatal():
    reply = Reply(tool_calls=[{"name": "add", "arguments": '{"a": 1, "b": '}])
    with ScriptedServer(SequenceResponder([reply], cycle=True)) as srv:
        env = single_turn(
            dataset=arithmetic_dataset(1), rubric=vf.Rubric(funcs=[lambda completion: 0.0])
        )
        out = env.evaluate_sync(client_for(srv), "m", num_examples=1)["outputs"][0]
    assert out["error"] is None
    call = out["completion"][0]["tool_calls"][0]
    assert call["function"] == {"name": "add", "arguments": '{"a": 1, "b": '}


def test_import_and_construction_configure_no_logging():
    import logging
    import subprocess
    import sys

    code = (
        "import logging, signal; before = (list(logging.getLogger().handlers), logging.getLogger().level);"
        "handlers = (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM));"
        "import verifiers as vf; from datasets import Dataset;"
        "vf.SingleTurnEnv(dataset=Dataset.from_list([{'question': 'q'}]));"
        "assert (list(logging.getLogger().handlers), logging.getLogger().level) == before;"
        "assert logging.getLogger('verifiers').handlers == [];"
        # unchanged, whatever they were (a shell's background job starts with SIGINT ignored)
        "assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == handlers"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    assert logging.getLogger("verifiers").handlers == []
