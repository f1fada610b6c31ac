"""prime-rl's orchestrators, replayed call for call against the SDK.

prime-rl v0.2 (the INTELLECT-3 trainer, on upstream verifiers 0.1.8) and v0.5.0 (on upstream
0.1.12) drive environments through a handful of `verifiers` calls and then read a fixed set of
fields off what comes back. Each test below makes the calls of one tag -- the same arguments in
the same positions and keywords, in the same order -- against a `ScriptedServer` that returns
vLLM-style token ids and logprobs, and asserts every field that tag reads, with the type and
meaning it relies on. The few lines of prime-rl's own code that consume the results
(`extract_result`, the advantage baseline, `interleave_rollout` / `branch_rollout`, the
rollout filters, the metrics frame) are restated here as assertions; none of it is copied.

Sources (file paths at each tag of github.com/PrimeIntellect-ai/prime-rl):
v0.2: orchestrator/orchestrator.py, env_worker.py, scheduler.py, buffer.py, trajectories.py,
advantage.py, utils.py; utils/vf.py; eval/utils.py.
v0.5.0: orchestrator/orchestrator.py, vf_utils.py, scheduler.py, buffer.py, trajectories.py,
filters.py, eval_utils.py, env_server/env_server.py; utils/client.py.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import multiprocessing as mp
import pickle
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletion

import verifiers as vf
from verifiers.testing import ArithmeticResponder, Reply, ScriptedServer
from verifiers.testing.processes import stop
from verifiers.testing.responders import last_message, last_text

MODEL = "mock-model"
SEQ_LEN = 4096
ROLLOUTS_PER_EXAMPLE = 2
# (id, name, args) of prime-rl's `[[env]]` entries: a single-turn XML env and a tool env
TRAIN_ENVS = [("classic-xml-math", "math", {"num_examples": 3}), ("classic-tool-env", "tools", {})]


# -- the scripted model ------------------------------------------------------------------------
class AlternatingResponder:
    """Answers arithmetic questions right on the 1st, 3rd, ... ask of a question and off by one
    on the others (so every group of two has one reward of each kind); in the XML format when
    the system prompt asks for it. Tool prompts get the calculator call, tool results the boxed
    result (`ArithmeticResponder`)."""

    def __init__(self) -> None:
        self.asked: dict[str, int] = defaultdict(int)
        self.tools = ArithmeticResponder()

    def __call__(self, body: dict[str, Any]) -> Reply:
        if body.get("tools") or last_message(body).get("role") == "tool":
            return self.tools(body)
        text = last_text(body)
        right = self.tools(body).content or ""
        n = self.asked[text]
        self.asked[text] += 1
        value = right.split("\\boxed{", 1)[1].split("}", 1)[0] if "\\boxed{" in right else "0"
        if n % 2:
            value = str(int(value) + 1)
        system = body["messages"][0].get("content") if body["messages"] else ""
        if isinstance(system, str) and "<answer>" in system:
            return Reply(content=f"<think>\nadding\n</think>\n<answer>\n{value}\n</answer>")
        return Reply(content=f"The answer is \\boxed{{{value}}}.")


@pytest.fixture
def model() -> Iterator[ScriptedServer]:
    with ScriptedServer(AlternatingResponder()) as srv:
        yield srv


@pytest.fixture
def restore_verifiers_logger() -> Iterator[None]:
    """`vf.setup_logging` configures the "verifiers" logger: put it back afterwards."""
    logger = logging.getLogger("verifiers")
    saved = (list(logger.handlers), logger.level, logger.propagate)
    yield
    logger.handlers[:], logger.level, logger.propagate = saved[0], saved[1], saved[2]


# -- what prime-rl reads, restated -------------------------------------------------------------
TOKEN_KEYS = {
    "prompt_ids",
    "prompt_mask",
    "completion_ids",
    "completion_mask",
    "completion_logprobs",
}


def step_tokens_ok(tokens: dict[str, Any]) -> None:
    """A step's `tokens`, as both tags' trajectories code indexes it."""
    assert TOKEN_KEYS <= set(tokens)
    assert len(tokens["prompt_ids"]) == len(tokens["prompt_mask"]) > 0
    n = len(tokens["completion_ids"])
    assert n > 0 and len(tokens["completion_mask"]) == len(tokens["completion_logprobs"]) == n
    assert all(isinstance(t, int) for t in tokens["prompt_ids"] + tokens["completion_ids"])
    assert all(isinstance(x, float) for x in tokens["completion_logprobs"])
    assert not any(tokens["prompt_mask"]) and all(tokens["completion_mask"])


def prompt_len(rollout: dict[str, Any]) -> int:
    """utils/vf.py (v0.2) / vf_utils.py (v0.5): the first step's prompt ids."""
    return len(rollout["trajectory"][0]["tokens"]["prompt_ids"]) if rollout["trajectory"] else 0


def seq_len(rollout: dict[str, Any]) -> int:
    """The last step's prompt + completion ids."""
    if not rollout["trajectory"]:
        return 0
    last = rollout["trajectory"][-1]["tokens"]
    return len(last["prompt_ids"]) + len(last["completion_ids"])


def baseline_advantages(rewards: list[float], per_problem: int) -> list[float]:
    """advantage.py (both tags, default config): reward minus its problem's mean reward; the
    flat list is grouped `per_problem` at a time, so a batch must keep groups contiguous."""
    out = []
    for i in range(0, len(rewards), per_problem):
        group = rewards[i : i + per_problem]
        mean = sum(group) / len(group)
        out.extend(r - mean for r in group)
    return out


def interleave(rollout: dict[str, Any], extension_required: bool) -> list[dict[str, Any]]:
    """The samples trajectories.py's `interleave_rollout` makes of a rollout: a step whose
    prompt ids extend an earlier sample's prompt+completion ids is appended to it (its new
    prompt ids with mask False and logprob 0.0, its completion ids with the step's mask, or all
    False when the rollout has an error); otherwise it starts a new sample (v0.5.0; v0.2 only
    warns and appends anyway, so there the extension must hold for the sample to be right)."""
    has_error = rollout["error"] is not None
    samples: list[dict[str, Any]] = []
    for step in rollout["trajectory"]:
        t = step["tokens"]
        mask = [False if has_error else bool(m) for m in t["completion_mask"]]
        for s in samples:
            prefix = s["prompt_ids"] + s["completion_ids"]
            if t["prompt_ids"][: len(prefix)] == prefix:
                new = t["prompt_ids"][len(prefix) :]
                s["completion_ids"] += new + t["completion_ids"]
                s["completion_mask"] += [False] * len(new) + mask
                s["completion_logprobs"] += [0.0] * len(new) + list(t["completion_logprobs"])
                break
        else:
            assert not (extension_required and samples), "turn does not extend the last one"
            samples.append(
                {
                    "prompt_ids": list(t["prompt_ids"]),
                    "prompt_mask": [bool(m) for m in t["prompt_mask"]],
                    "completion_ids": list(t["completion_ids"]),
                    "completion_mask": mask,
                    "completion_logprobs": list(t["completion_logprobs"]),
                }
            )
    return samples


def sample_matches_server(sample: dict[str, Any], rollout: dict[str, Any]) -> None:
    """A merged sample is the last turn's exact ids; the mask is True on model tokens only."""
    last = rollout["trajectory"][-1]["tokens"]
    assert sample["prompt_ids"] + sample["completion_ids"] == (
        last["prompt_ids"] + last["completion_ids"]
    )
    model_tokens = sum(len(s["tokens"]["completion_ids"]) for s in rollout["trajectory"])
    assert sum(sample["completion_mask"]) == model_tokens
    assert len(sample["completion_logprobs"]) == len(sample["completion_ids"])


def timing_ms_ok(timing: dict[str, Any]) -> None:
    """`timing` in milliseconds, as the tags log and save it (`generation_ms/mean`, ...)."""
    for key in ("generation_ms", "scoring_ms", "total_ms"):
        assert isinstance(timing[key], float) and timing[key] >= 0.0
    assert timing["generation_ms"] > 0.0  # a real model call took place
    assert timing["total_ms"] >= timing["generation_ms"]
    if "generation" in timing:  # ours in seconds beside them: the same clock, x1000
        assert timing["generation_ms"] == pytest.approx(timing["generation"] * 1000.0)


# -- prime-rl v0.2 (verifiers 0.1.8) -----------------------------------------------------------
def sampling_args_v02() -> dict[str, Any]:
    """orchestrator/utils.py `get_sampling_args` of a default SamplingConfig."""
    return {
        "temperature": 1.0,
        "max_tokens": None,
        "seed": None,
        "top_p": 1.0,
        "logprobs": True,
        "extra_body": {
            "return_token_ids": True,
            "top_k": -1,
            "min_p": 0.0,
            "min_tokens": 0,
            "repetition_penalty": 1.0,
        },
    }


def extract_result(state: vf.State) -> dict[str, Any]:
    """env_worker.py `extract_result`: what crosses back from a v0.2 env worker process."""
    return {
        "example_id": state.get("example_id"),
        "task": state.get("task"),
        "reward": state.get("reward"),
        "is_truncated": state.get("is_truncated", False),
        "error": type(state["error"]).__name__ if state.get("error") else None,
        "timing": dict(state.get("timing", {})),
        "metrics": state.get("metrics", {}),
        "prompt": state.get("prompt"),
        "completion": state.get("completion"),
        "trajectory": [
            {
                "prompt": s.get("prompt"),
                "completion": s.get("completion"),
                "tokens": s.get("tokens"),
            }
            for s in state.get("trajectory", [])
        ],
    }


async def v02_train_step(base_url: str) -> tuple[vf.Environment, list[dict[str, Any]]]:
    """orchestrator.py + scheduler.py + env_worker.py of v0.2, one batch."""
    from verifiers.utils.async_utils import maybe_semaphore

    vf.setup_logging(level="INFO")
    env = vf.EnvGroup(
        envs=[vf.load_environment(env_id, **args) for env_id, _, args in TRAIN_ENVS],
        env_names=[name for _, name, _ in TRAIN_ENVS],
        map_kwargs=dict(writer_batch_size=1),
    )
    env.set_max_seq_len(SEQ_LEN)
    env.set_interleaved_rollouts(True)  # trajectory_strategy = "interleaved"
    train_dataset = env.get_dataset(seed=0)
    # buffer.py's checks on the dataset, then its example lookup per task
    assert isinstance(train_dataset["example_id"][0], int)
    assert len(set(train_dataset["example_id"])) == len(train_dataset)
    assert set(train_dataset["task"]) == set(env.env_names)
    lookup: dict[str, dict[int, dict]] = defaultdict(dict)
    for example in train_dataset:
        lookup[example["task"]][example["example_id"]] = example
    await maybe_semaphore(-1)  # set_semaphore(config.max_concurrent or -1)

    results: list[dict[str, Any]] = []
    for env_id, name, args in TRAIN_ENVS:  # one EnvWorker per env, each loading its own env
        worker_env = vf.load_environment(env_id, **args)
        worker_env.set_max_seq_len(SEQ_LEN)
        worker_env.set_interleaved_rollouts(True)
        client = AsyncOpenAI(base_url=base_url, api_key="EMPTY", max_retries=10)
        semaphore = asyncio.Semaphore(10000)  # max_concurrent unset
        for example_id in list(lookup[name])[:2]:
            group_inputs = [
                vf.RolloutInput(**lookup[name][example_id]) for _ in range(ROLLOUTS_PER_EXAMPLE)
            ]
            states = await worker_env.run_group(
                group_inputs=group_inputs,
                client=client,
                model=MODEL,
                gen_sampling_args=sampling_args_v02(),
                gen_sem=semaphore,
                score_sem=semaphore,
            )
            # the result dicts cross a multiprocessing Queue: they must pickle
            results.extend(pickle.loads(pickle.dumps(extract_result(s))) for s in states)
    return env, results


def test_prime_rl_v02_training_step(model, restore_verifiers_logger):
    """prime-rl v0.2 on upstream 0.1.8's calls: `EnvGroup(envs, env_names, map_kwargs)`,
    `set_max_seq_len`, `set_interleaved_rollouts`, `get_dataset(seed=)`, and per env worker
    `load_environment`, the setters, `run_group(group_inputs=, client=AsyncOpenAI, model=,
    gen_sampling_args=, gen_sem=, score_sem=)`; then every field the orchestrator reads."""
    env, rollouts = asyncio.run(v02_train_step(model.base_url))
    assert env.interleaved_rollouts and all(e.interleaved_rollouts for e in env.envs)
    assert len(rollouts) == 2 * 2 * ROLLOUTS_PER_EXAMPLE
    assert all(r["return_token_ids"] is True and r["logprobs"] is True for r in model.requests)
    # interleaved rollouts: a tool rollout's second turn went token-in (prime-rl's
    # /chat/completions/tokens, the first turn's exact ids + the tool message's), nothing else
    token_in = [r for r in model.requests if "tokens" in r]
    assert len(token_in) == 2 * ROLLOUTS_PER_EXAMPLE
    assert all(r["messages"][-1]["role"] == "tool" for r in token_in)

    for r in rollouts:
        assert isinstance(r["example_id"], int) and r["task"] in ("math", "tools")
        assert isinstance(r["reward"], float) and math.isfinite(r["reward"])
        assert r["error"] is None and r["is_truncated"] is False
        timing_ms_ok(r["timing"])
        assert set(r["metrics"]) and all(isinstance(v, float) for v in r["metrics"].values())
        assert r["prompt"][-1]["role"] == "user" and r["completion"][-1]["role"] == "assistant"
        for step in r["trajectory"]:
            step_tokens_ok(step["tokens"])
            assert step["tokens"]["is_truncated"] is False  # utils/vf.py get_is_truncated
        assert seq_len(r) - prompt_len(r) > 0  # completion_len feeds the advantage
    # the tool env's rollouts are multi-turn, the math env's single-turn
    turns = {r["task"]: len(r["trajectory"]) for r in rollouts}
    assert turns == {"math": 1, "tools": 2}

    # advantages: per group of rollouts_per_example, contiguous as the worker returns them
    rewards = [r["reward"] for r in rollouts]
    advantages = baseline_advantages(rewards, ROLLOUTS_PER_EXAMPLE)
    math_groups = [rewards[i : i + 2] for i in range(0, 4, 2)]
    assert all(g[0] != g[1] for g in math_groups)  # right and wrong in each group
    assert all(a != 0.0 for a in advantages[:4]) and advantages[4:] == [0.0] * 4

    # interleave_rollout (trajectory_strategy="interleaved"): one sample per rollout
    for r in rollouts:
        (sample,) = interleave(r, extension_required=True)
        sample_matches_server(sample, r)


async def v02_val_and_eval(base_url: str) -> tuple[list[vf.State], list[vf.State], list[vf.State]]:
    from verifiers.utils.async_utils import maybe_semaphore

    env = vf.EnvGroup(
        envs=[vf.load_environment(env_id, **args) for env_id, _, args in TRAIN_ENVS],
        env_names=[name for _, name, _ in TRAIN_ENVS],
        map_kwargs=dict(writer_batch_size=1),
    )
    client = AsyncOpenAI(base_url=base_url, api_key="EMPTY")
    semaphore = await maybe_semaphore(-1)
    # val: utils/vf.py generate_batch -> generate_group on the EnvGroup itself
    val = []
    for example in env.get_eval_dataset(seed=0).select(range(4)).to_list():
        val.extend(
            await env.run_group(
                group_inputs=[vf.RolloutInput(**example) for _ in range(ROLLOUTS_PER_EXAMPLE)],
                client=client,
                model=MODEL,
                gen_sampling_args=sampling_args_v02(),
                gen_sem=semaphore,
                score_sem=semaphore,
            )
        )
    # eval: eval/utils.py run_eval, per_rollout and group scheduling, no token ids asked for
    eval_env = vf.load_environment("classic-tool-env")
    examples = eval_env.get_eval_dataset(n=2).to_list()
    eval_sampling = {"extra_body": {}}  # prepare_sampling_args of a default EvalSamplingConfig
    per_rollout = []
    for example in examples:
        state = await eval_env.run_rollout(
            semaphore, vf.RolloutInput(**example), client, MODEL, eval_sampling
        )
        await eval_env.rubric.score_rollout(state, score_sem=semaphore)
        per_rollout.append(state)
    grouped = []
    for example in examples:
        grouped.extend(
            await eval_env.run_group(
                group_inputs=[vf.RolloutInput(**example) for _ in range(ROLLOUTS_PER_EXAMPLE)],
                client=client,
                model=MODEL,
                gen_sampling_args=eval_sampling,
                gen_sem=semaphore,
                score_sem=semaphore,
            )
        )
    return val, per_rollout, grouped


def test_prime_rl_v02_val_and_eval(model):
    """prime-rl v0.2's validation (`run_group` on the EnvGroup, then `state["input"]`) and
    evals (`run_rollout(sem, input, client, model, sampling_args)` + `rubric.score_rollout(
    state, score_sem=)`, or `run_group`), reading what utils/vf.py and eval/utils.py
    `make_result` read -- without token ids, off each step's `ChatCompletion`."""
    val, per_rollout, grouped = asyncio.run(v02_val_and_eval(model.base_url))
    assert {s["input"]["task"] for s in val} == {"math", "tools"}
    for s in val:
        assert isinstance(s["input"]["example_id"], int) and math.isfinite(s["reward"])
        assert isinstance(s["advantage"], float)
    for s in per_rollout + grouped:
        # get_completion_len / get_is_truncated: no token ids, so the responses' usage
        assert all(step["tokens"] is None for step in s["trajectory"])
        first, last = s["trajectory"][0]["response"], s["trajectory"][-1]["response"]
        assert isinstance(first, vf.ChatCompletion) and isinstance(last, ChatCompletion)
        assert last.usage.total_tokens - first.usage.prompt_tokens > 0
        assert last.choices[0].finish_reason == "stop"
        # make_result
        assert s["reward"] == 1.0 and s["metrics"] == {"correct_answer": 1.0}
        # no task column: the env id, as 0.1.8's init_state fills it in
        assert isinstance(s["example_id"], int) and s["task"] == "classic-tool-env"
        assert s["prompt"][0]["role"] == "user" and s.get("answer") and s.get("info") == {}
        timing_ms_ok(s["timing"])
        json.dumps(s["oai_tools"])
        assert s["oai_tools"][0]["function"]["name"] == "add"
        # merge_reasoning_content: one response per assistant message, each a ChatCompletion
        assistant = [m for m in s["completion"] if m.get("role") == "assistant"]
        assert len(assistant) == len(s["trajectory"])
        assert s["trajectory"][0]["response"].choices[0].message.tool_calls[0].function.name == (
            "add"
        )
    # the group's advantages are group-relative (all right here: zero)
    assert [s["advantage"] for s in grouped] == [0.0] * len(grouped)


def to_serializable_state(state: vf.State) -> dict[str, Any]:
    """utils/vf.py (v0.2): a state copy with the `State.INPUT_FIELDS` of its `input` at top
    level and each step's `ChatCompletion` dumped."""
    out = dict(state)
    if "input" in state:
        source = out.pop("input")
        for name in vf.State.INPUT_FIELDS:
            if name in source:
                out[name] = source[name]
    out["trajectory"] = [
        {**step, "response": step["response"].model_dump()}
        if isinstance(step.get("response"), ChatCompletion)
        else dict(step)
        for step in state["trajectory"]
    ]
    return out


def from_serializable_state(data: dict[str, Any]) -> vf.State:
    """utils/vf.py (v0.2): the inverse, `vf.State(**...)` with the input fields moved back."""
    data = dict(data)
    source = {name: data.pop(name) for name in vf.State.INPUT_FIELDS if name in data}
    if source:
        data["input"] = source
    state = vf.State(**data)
    state["trajectory"] = [
        {**step, "response": ChatCompletion.model_validate(step["response"])}
        for step in state["trajectory"]
    ]
    return state


def test_prime_rl_v02_eval_saves_results(model, tmp_path):
    """prime-rl v0.2 eval/utils.py, results saved to disk: `to_serializable_state`, then
    `env._prepare_rollout_results(all_states=, model=, client=, state_columns=None,
    results_path=None, gen_sampling_args=, start_time=)` (upstream 0.1.8's columnar results),
    `verifiers.utils.eval_utils` `make_dataset` / `sanitize_metadata` / `save_to_disk` /
    `get_hf_hub_dataset_name`, and `verifiers.envs.environment.get_results_path`."""
    from verifiers.envs.environment import get_results_path
    from verifiers.utils.async_utils import maybe_semaphore
    from verifiers.utils.eval_utils import (
        get_hf_hub_dataset_name,
        make_dataset,
        sanitize_metadata,
        save_to_disk,
    )

    env = vf.load_environment("classic-tool-env")
    client = AsyncOpenAI(base_url=model.base_url, api_key="EMPTY")

    async def run() -> list[vf.State]:
        semaphore = await maybe_semaphore(-1)
        states = []
        for example in env.get_eval_dataset(n=2).to_list():
            states.extend(
                await env.run_group(
                    group_inputs=[vf.RolloutInput(**example) for _ in range(2)],
                    client=client,
                    model=MODEL,
                    gen_sampling_args={"extra_body": {}},
                    gen_sem=semaphore,
                    score_sem=semaphore,
                )
            )
        return states

    states = asyncio.run(run())
    serializable = [to_serializable_state(s) for s in states]
    assert "input" not in serializable[0] and serializable[0]["answer"] == "42"
    back = from_serializable_state(dict(serializable[0]))
    assert back["answer"] == "42" and back["input"]["example_id"] == states[0]["example_id"]

    outputs = env._prepare_rollout_results(
        all_states=serializable,
        model=MODEL,
        client=client,
        state_columns=None,
        results_path=None,
        gen_sampling_args={"extra_body": {}},
        start_time=0.0,
    )
    assert outputs["reward"] == [1.0] * 4 and outputs["example_id"] == [0, 0, 1, 1]
    assert outputs["metrics"] == {"correct_answer": [1.0] * 4}
    meta = outputs["metadata"]
    assert (meta["env_id"], meta["num_examples"], meta["rollouts_per_example"]) == (
        "classic-tool-env",
        2,
        2,
    )
    assert meta["path_to_save"].parent == get_results_path("classic-tool-env", MODEL).parent
    assert get_hf_hub_dataset_name(outputs) == f"classic-tool-env_{MODEL}_n2_r2"
    dataset = make_dataset(outputs)
    metadata = sanitize_metadata(meta)
    assert "path_to_save" not in metadata and "date" not in metadata
    save_to_disk(dataset, metadata, tmp_path / "run")
    rows = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").open()]
    saved = json.loads((tmp_path / "run" / "metadata.json").read_text())
    assert saved["avg_reward"] == 1.0 and saved["model"] == MODEL
    assert [r["reward"] for r in rows] == [1.0] * 4 and rows[0]["error"] is None
    assert rows[0]["answer"] == "42" and rows[0]["correct_answer"] == 1.0
    assert rows[0]["completion"][0]["role"] == "assistant"
    assert json.loads(rows[0]["completion"][0]["tool_calls"][0])["function"]["name"] == "add"
    assert all(r["generation_ms"] > 0.0 for r in rows)


# -- prime-rl v0.5.0 (verifiers 0.1.12) --------------------------------------------------------
THIS_ENV = "test_prime_rl_replay"  # this module is also an environment (`load_environment`)
# (id, name, args): a single-turn env with a group reward function (so its scoring is deferred
# to the orchestrator) and the tool env
TRAIN_ENVS_V05 = [(THIS_ENV, "group", {}), ("classic-tool-env", "tools", {})]


def load_environment(**kwargs: Any) -> vf.Environment:
    """A classic single-turn environment with a group reward function (a plural parameter),
    for the env servers of the v0.5.0 replay: `correct` + 0.5 * the group's share of distinct
    answers."""
    from datasets import Dataset

    rows = [{"question": f"What is {i} + {i}?", "answer": str(2 * i)} for i in range(1, 5)]

    def correct(completion, answer) -> float:
        return float(f"\\boxed{{{answer}}}" in (completion[-1]["content"] or ""))

    def distinct_answers(completions, **kwargs) -> list[float]:
        texts = [c[-1]["content"] for c in completions]
        return [len(set(texts)) / len(texts)] * len(texts)

    rubric = vf.Rubric(funcs=[correct, distinct_answers], weights=[1.0, 0.5])
    return vf.SingleTurnEnv(dataset=Dataset.from_list(rows), rubric=rubric, **kwargs)


@pytest.fixture
def tests_dir_importable() -> Iterator[None]:
    """Spawned env servers start from this process's sys.path: with this directory on it they
    import this module as the environment `test_prime_rl_replay`."""
    here = str(Path(__file__).parent)
    sys.path.insert(0, here)
    yield
    sys.path.remove(here)


REQUIRED_STATE_COLUMNS = ["trajectory", "sampling_args"]  # vf_utils.py


def sampling_args_v05() -> dict[str, Any]:
    """orchestrator/utils.py `get_sampling_args(config, temperature=1.0, is_vllm=True)` of a
    default SamplingConfig: v0.2's, but min_tokens 0 and repetition_penalty 1.0 are left out."""
    args = sampling_args_v02()
    del args["extra_body"]["min_tokens"], args["extra_body"]["repetition_penalty"]
    return args


def client_configs_v05(base_url: str) -> list[vf.ClientConfig]:
    """utils/client.py `setup_clients`: one `vf.ClientConfig` per base URL and DP rank."""
    return [
        vf.ClientConfig(
            client_idx=0,
            client_type="openai_chat_completions",
            api_base_url=base_url,
            api_key_var="OPENAI_API_KEY",
            timeout=1200,
            connect_timeout=5.0,
            max_connections=8192,
            max_keepalive_connections=8192,
            max_retries=10,
            extra_headers={},
            extra_headers_from_state={},
        )
    ]


def spawn_env_server_v05(env_id: str, env_args: dict, extra_env_kwargs: dict) -> tuple:
    """vf_utils.py `spawn_env_server`: `ZMQEnvServer.run_server` in a spawned process."""
    from verifiers.serve import ZMQEnvServer
    from verifiers.utils.serve_utils import get_free_port

    address = f"tcp://127.0.0.1:{get_free_port()}"
    process = mp.get_context("spawn").Process(
        target=ZMQEnvServer.run_server,
        args=(env_id, env_args, extra_env_kwargs, "WARNING", None),
        kwargs=dict(address=address, json_logging=False, console_logging=False, num_workers=1),
        daemon=False,
    )
    process.start()
    return address, process


def task_uses_group_scoring(env: vf.Environment, task_name: str) -> bool:
    """vf_utils.py: the task's rubric has a group-level reward function."""
    rubric = env.get_env_for_task(task_name).rubric
    return any(rubric._is_group_func(func) for func in rubric._get_reward_funcs())


async def v05_step(base_url: str, processes: list) -> dict[str, Any]:
    """orchestrator.py + scheduler.py + vf_utils.py + eval_utils.py of v0.5.0, one batch."""
    from verifiers.serve import EnvClient, ZMQEnvClient

    clients = client_configs_v05(base_url)
    train_env_group = vf.EnvGroup(
        envs=[vf.load_environment(env_id, **args) for env_id, _, args in TRAIN_ENVS_V05],
        env_names=[name for _, name, _ in TRAIN_ENVS_V05],
        map_kwargs=dict(writer_batch_size=1),
    )
    deferred = {n for n in train_env_group.env_names if task_uses_group_scoring(train_env_group, n)}
    env_clients: list[EnvClient] = []
    for env_id, name, args in TRAIN_ENVS_V05:
        extra_env_kwargs = {"score_rollouts": name not in deferred}  # verification enabled
        address, process = spawn_env_server_v05(env_id, args, extra_env_kwargs)
        processes.append(process)
        env_clients.append(
            ZMQEnvClient(
                address=address,
                name=name,
                health_check_interval=5.0,
                startup_timeout=600.0,
                recovery_timeout=600.0,
            )
        )
    await asyncio.gather(*[c.wait_for_server_startup() for c in env_clients])
    for env, env_client in zip(train_env_group.envs, env_clients, strict=True):
        env.env_client = env_client  # "server mode" for every run_rollout / run_group

    dataset = train_env_group.get_dataset(seed=0)
    assert isinstance(dataset["example_id"][0], int) and set(dataset["task"]) == {"group", "tools"}
    examples = {t: [e for e in dataset.to_list() if e["task"] == t][:2] for t in ("group", "tools")}

    async def rollout(example: dict) -> dict:  # vf_utils.run_rollout, as the scheduler calls it
        return await train_env_group.run_rollout(
            vf.RolloutInput(**example),
            client=clients[0],
            model=MODEL,
            sampling_args=sampling_args_v05(),
            max_retries=0,
            state_columns=[*REQUIRED_STATE_COLUMNS],
        )

    batch: list[dict] = []
    for task in ("group", "tools"):
        for example in examples[task]:
            group = list(await asyncio.gather(*[rollout(example) for _ in range(2)]))
            for out in group:  # the scheduler reschedules these; none here
                assert len(out["trajectory"]) > 0 and out["error"] is None
            if task in deferred:  # _score_group_if_deferred
                env_for_task = train_env_group.get_env_for_task(task)
                await env_for_task.rubric.score_group(group)
            batch.extend(group)

    # val: vf_utils.generate -> run_group on the EnvGroup (its members' servers run it)
    val: list[dict] = []
    for example in examples["group"][:1] + examples["tools"][:1]:
        val.extend(
            await train_env_group.run_group(
                [vf.RolloutInput(**example) for _ in range(2)],
                client=clients[0],
                model=MODEL,
                sampling_args=sampling_args_v05(),
                max_retries=0,
                state_columns=[*REQUIRED_STATE_COLUMNS],
            )
        )

    # eval: eval_utils.evaluate_env -> vf_utils.evaluate, an eval env on an external server
    eval_env = vf.load_environment("classic-tool-env")
    eval_env.env_client = ZMQEnvClient(address=env_clients[1].address, name="eval")
    await eval_env.env_client.wait_for_server_startup()
    inputs = eval_env._get_eval_inputs(2, 2)
    evals: list[dict] = []
    for example in inputs:  # rollouts_per_example=1: the inputs are already repeated
        evals.extend(
            await eval_env.run_group(
                [vf.RolloutInput(**example)],
                client=clients[0],
                model=MODEL,
                sampling_args={"extra_body": {}},  # get_eval_sampling_args of the defaults
                max_retries=0,
                state_columns=[*REQUIRED_STATE_COLUMNS],
            )
        )
    for c in [*env_clients, eval_env.env_client]:
        await c.close()
    return {
        "group": train_env_group,
        "deferred": deferred,
        "batch": batch,
        "val": val,
        "inputs": inputs,
        "evals": evals,
    }


@pytest.fixture
def v05_processes() -> Iterator[list]:
    processes: list = []
    yield processes
    for process in processes:
        stop(process)


def test_prime_rl_v05_step_on_env_servers(model, tests_dir_importable, v05_processes):
    """prime-rl v0.5.0 on upstream 0.1.12's calls: `vf.ClientConfig(client_idx, client_type,
    api_base_url, api_key_var, timeout, connect_timeout, max_connections,
    max_keepalive_connections, max_retries, extra_headers, extra_headers_from_state)`,
    `EnvGroup(...)`, `rubric._is_group_func` / `_get_reward_funcs`, env servers
    (`ZMQEnvServer.run_server`, `ZMQEnvClient`, `env.env_client = ...`), per rollout
    `EnvGroup.run_rollout(input, client=, model=, sampling_args=, max_retries=,
    state_columns=)`, deferred `rubric.score_group(outputs)`, `run_group` for val and evals,
    `_get_eval_inputs`; then every field the orchestrator, filters and trajectories read."""
    result = asyncio.run(asyncio.wait_for(v05_step(model.base_url, v05_processes), 300))
    assert result["deferred"] == {"group"}
    batch = result["batch"]
    assert [o["task"] for o in batch] == ["group"] * 4 + ["tools"] * 4
    for out in batch:
        assert isinstance(out["example_id"], int)
        assert isinstance(out["reward"], float) and math.isfinite(out["reward"])
        assert out["is_truncated"] is False and out.get("stop_condition") is not None
        timing_ms_ok(out["timing"])
        assert out["sampling_args"]["temperature"] == 1.0  # interleave_rollout reads it
        for step in out["trajectory"]:
            step_tokens_ok(step["tokens"])
            assert step["tokens"].get("routed_experts") is None
        # filters.py: metrics is a dict it may add to; masks and stop_condition writable
        assert isinstance(out["metrics"], dict)
        out["metrics"].setdefault("filter/gibberish", 0.0)
    # the deferred group scoring set rewards and metrics on the output records themselves
    group_rewards = [o["reward"] for o in batch[:4]]
    assert group_rewards == [1.5, 0.5, 1.5, 0.5]  # correct + 0.5 * unique answers (1.0)
    assert all(o["metrics"]["distinct_answers"] == 1.0 for o in batch[:4])
    assert [o["reward"] for o in batch[4:]] == [1.0] * 4  # scored on the server
    assert {len(o["trajectory"]) for o in batch[4:]} == {2}

    rewards = [o["reward"] for o in batch]
    advantages = baseline_advantages(rewards, 2)
    assert advantages == [0.5, -0.5, 0.5, -0.5, 0.0, 0.0, 0.0, 0.0]
    for out, advantage in zip(batch, advantages, strict=True):
        samples = interleave(out, extension_required=False)
        assert len(samples) == 1  # the extension property holds on every turn here
        sample_matches_server(samples[0], out)
        decode = sum(samples[0]["completion_mask"])
        prefill = len(samples[0]["prompt_ids"]) + len(samples[0]["completion_mask"]) - decode
        assert decode > 0 and prefill > 0 and isinstance(advantage, float)

    # val: group outputs of the EnvGroup, from each member's server
    assert [o["task"] for o in result["val"]] == ["group", "group", "tools", "tools"]
    # ... really from the servers: the group env's server does not score (score_rollouts
    # False, and val defers nothing), the tool env's does; in process both would score
    assert [o["reward"] for o in result["val"]] == [0.0, 0.0, 1.0, 1.0]

    # evals: inputs repeated, outputs without token ids; the length comes from `usage`
    assert len(result["inputs"]) == 4 and len(result["evals"]) == 4
    for out in result["evals"]:
        assert out["reward"] == 1.0 and out.get("error") is None and out.get("completion")
        assert all(step["tokens"] is None for step in out["trajectory"])
        first = out["trajectory"][0]["response"]["usage"]
        last = out["trajectory"][-1]["response"]["usage"]
        assert last["total_tokens"] - first["prompt_tokens"] > 0  # get_completion_len
        json.dumps(
            [out.get(k) for k in ("info", "metrics", "timing", "prompt", "completion")]
        )  # monitor.log_eval_samples


# -- the imports and helpers the tags use beyond the rollout calls ------------------------------
def test_v05_module_level_imports_and_helpers(model):
    """prime-rl v0.5.0 imports at module level (vf_utils.py, buffer.py, orchestrator/utils.py):
    `verifiers.serve` (EnvClient, ZMQEnvClient, ZMQEnvServer), `utils.serve_utils.get_free_port`,
    `utils.save_utils.make_serializable` (the rollout buffer's `json.dumps(default=)`),
    `utils.async_utils.maybe_semaphore`, `utils.client_utils.setup_openai_client` (a raw
    AsyncOpenAI from a `vf.ClientConfig`, as upstream 0.1.12 utils/client_utils.py)."""
    from verifiers.serve import EnvClient, ZMQEnvClient, ZMQEnvServer  # noqa: F401
    from verifiers.utils.async_utils import maybe_semaphore  # noqa: F401
    from verifiers.utils.client_utils import setup_openai_client
    from verifiers.utils.save_utils import make_serializable
    from verifiers.utils.serve_utils import get_free_port

    assert 0 < get_free_port() < 65536
    record = {
        "path": Path("/tmp/x"),
        "error": ValueError("bad"),
        "message": vf.AssistantMessage(content="hi"),
        "other": object,
    }
    decoded = json.loads(json.dumps(record, default=make_serializable))
    assert decoded["path"] == "/tmp/x" and decoded["error"] == "ValueError('bad')"
    assert decoded["message"] == {"role": "assistant", "content": "hi"}
    assert decoded["other"] == str(object)

    config = vf.ClientConfig(
        api_base_url="http://unused.invalid/v1",
        endpoint_configs=[
            vf.EndpointConfig("http://unused.invalid/v1"),
            vf.EndpointConfig(model.base_url, extra_headers={"X-data-parallel-rank": "1"}),
        ],
        client_idx=1,
        max_retries=3,
    )
    client = setup_openai_client(config)
    assert isinstance(client, AsyncOpenAI) and client.max_retries == 3
    assert str(client.base_url).rstrip("/") == model.base_url

    async def ask() -> Any:
        try:
            return await client.chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": "What is 2 + 3?"}]
            )
        finally:
            await client.close()

    reply = asyncio.run(ask())
    assert "\\boxed{5}" in reply.choices[0].message.content


def test_extra_headers_from_state_is_accepted_and_flagged(caplog):
    """upstream 0.1.12 ClientConfig.extra_headers_from_state (prime-rl v0.5 always passes it,
    `{}` by default). Ours accepts it; a non-empty mapping is not applied (our clients do not
    see the rollout state), which is logged rather than dropped silently."""
    with caplog.at_level(logging.WARNING, logger="verifiers"):
        vf.ClientConfig(extra_headers_from_state={})
        assert not caplog.records
        config = vf.ClientConfig(extra_headers_from_state={"X-Session-ID": "example_id"})
    assert config.extra_headers_from_state == {"X-Session-ID": "example_id"}
    assert "X-Session-ID" in caplog.text and "not applied" in caplog.text


class RecordingEnvClient:
    """Stands in for a `ZMQEnvClient`: records the 0.1.12 calls it is handed."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.calls: list[tuple] = []

    async def run_rollout(self, input, client_config, model, sampling_args, max_retries=0,
                          state_columns=None):  # fmt: skip
        self.calls.append(("run_rollout", input["task"], model, max_retries, state_columns))
        return {"served_by": self.name}

    async def run_group(self, group_inputs, client_config, model, sampling_args, max_retries=0,
                        state_columns=None):  # fmt: skip
        self.calls.append(("run_group", len(group_inputs), model, max_retries, state_columns))
        return [{"served_by": self.name} for _ in group_inputs]


def test_env_client_precedence_in_the_0112_calls():
    """upstream 0.1.12 Environment/EnvGroup.run_rollout / run_group: the `env_client` argument,
    else the routed member's `env_client`, else the group's own; the call goes to it with the
    same input, model, sampling args, max_retries and state_columns."""
    envs = [vf.load_environment(env_id, **args) for env_id, _, args in TRAIN_ENVS]
    group = vf.EnvGroup(envs=envs, env_names=["math", "tools"])
    rows = {r["task"]: r for r in group.get_dataset().to_list()}
    config = vf.ClientConfig(api_base_url="http://unused.invalid/v1")
    member, own = RecordingEnvClient("member"), RecordingEnvClient("own")
    explicit = RecordingEnvClient("explicit")
    envs[1].env_client = member
    group.env_client = own

    async def go() -> list[Any]:
        return [
            await group.run_rollout(rows["tools"], config, MODEL, {}, 2, ["trajectory"]),
            await group.run_rollout(rows["math"], config, MODEL, {}),
            await group.run_group([rows["tools"]] * 2, config, MODEL, {}, 0, None),
            await group.run_rollout(rows["tools"], config, MODEL, {}, env_client=explicit),
        ]

    one, other, many, forced = asyncio.run(go())
    assert one == {"served_by": "member"} and other == {"served_by": "own"}
    assert many == [{"served_by": "member"}] * 2 and forced == {"served_by": "explicit"}
    assert member.calls == [
        ("run_rollout", "tools", MODEL, 2, ["trajectory"]),
        ("run_group", 2, MODEL, 0, None),
    ]
    assert own.calls == [("run_rollout", "math", MODEL, 0, None)]


# -- failed and truncated rollouts, as both tags read them -------------------------------------
def test_failed_and_truncated_rollouts_as_both_tags_read_them(model):
    """What prime-rl masks and counts: a rollout whose second turn failed (HTTP 400 from the
    model server) and a single-turn rollout cut at `max_tokens`. v0.2 (env_worker.py,
    trajectories.py, utils/vf.py): `error` is the exception (its type name crosses the
    worker queue), an errored rollout's samples have an all-False mask, a cut one has
    `tokens["is_truncated"]`. v0.5.0 (scheduler.py, orchestrator.py): `error` is a record
    with `error_chain_repr` (logged on reschedule), `is_truncated` and `stop_condition`."""
    from verifiers.testing import Fault

    model.add_fault(Fault(status=400, times=None, match=r"^42$", message="bad request"))
    tools = vf.load_environment("classic-tool-env")
    single = vf.load_environment("classic-xml-math", num_examples=1)
    failing = tools.get_dataset().to_list()[0]  # 12 + 30: its tool turn gets the 400
    short = {**sampling_args_v02(), "max_tokens": 3}

    async def run() -> tuple[list, list, dict, dict]:
        client = AsyncOpenAI(base_url=model.base_url, api_key="EMPTY")
        sem = asyncio.Semaphore(8)
        failed_018 = await tools.run_group(
            group_inputs=[vf.RolloutInput(**failing)],
            client=client,
            model=MODEL,
            gen_sampling_args=sampling_args_v02(),
            gen_sem=sem,
            score_sem=sem,
        )
        cut_018 = await single.run_group(
            group_inputs=[vf.RolloutInput(**single.get_dataset().to_list()[0])],
            client=client,
            model=MODEL,
            gen_sampling_args=short,
            gen_sem=sem,
            score_sem=sem,
        )
        config = client_configs_v05(model.base_url)[0]
        failed_0112 = await tools.run_rollout(
            vf.RolloutInput(**failing),
            client=config,
            model=MODEL,
            sampling_args=sampling_args_v05(),
            max_retries=0,
            state_columns=REQUIRED_STATE_COLUMNS,
        )
        cut_0112 = await single.run_rollout(
            vf.RolloutInput(**single.get_dataset().to_list()[0]),
            client=config,
            model=MODEL,
            sampling_args={**sampling_args_v05(), "max_tokens": 3},
            max_retries=0,
            state_columns=REQUIRED_STATE_COLUMNS,
        )
        return failed_018, cut_018, failed_0112, cut_0112

    (failed, *_), (cut, *_), failed_out, cut_out = asyncio.run(run())

    # v0.2
    result = extract_result(failed)
    assert result["error"] == "ModelError" and len(result["trajectory"]) == 1
    (sample,) = interleave(result, extension_required=True)
    assert not any(sample["completion_mask"])  # nothing of an errored rollout is trained on
    cut_result = extract_result(cut)
    assert cut_result["is_truncated"] is True and cut_result["error"] is None
    assert cut_result["trajectory"][-1]["tokens"]["is_truncated"] is True
    assert len(cut_result["trajectory"][-1]["tokens"]["completion_ids"]) == 3

    # v0.5.0
    assert isinstance(failed_out["error"], dict) and failed_out["stop_condition"] == "has_error"
    assert "ModelError" in failed_out["error"]["error_chain_repr"]
    assert "bad request" in failed_out["error"]["error_chain_str"]
    assert not any(interleave(failed_out, extension_required=False)[0]["completion_mask"])
    assert cut_out["is_truncated"] is True and cut_out["error"] is None
    assert cut_out.get("stop_condition") is not None
    (cut_sample,) = interleave(cut_out, extension_required=False)
    assert sum(cut_sample["completion_mask"]) == 3
