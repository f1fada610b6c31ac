"""`Environment` split along its seams (issue 29 item 4): its datasets (`env.datasets`) and
its threads for sync user code (`env.threads`) are composed objects, reached under the
classic names users and subclasses call (`get_dataset`, `build_dataset`, `eval_inputs`,
`run_sync`, `oai_tools`); and `Environment` imports `verifiers.generation` directly, with no
import back (the lazy-import cycle is gone)."""

import ast
import asyncio
import inspect
import threading
from pathlib import Path

import pytest
from datasets import Dataset

import verifiers as vf
from verifiers.envs.env_datasets import EnvDatasets
from verifiers.envs.environment import Environment
from verifiers.envs.forwarding import forward, forward_attribute
from verifiers.envs.output_records import output_record
from verifiers.envs.user_threads import UserThreads
from verifiers.state import State

SRC = Path(vf.__file__).parent


def rows(n: int) -> list[dict]:
    return [{"question": f"q{i}", "answer": str(i)} for i in range(n)]


def test_dataset_methods_are_the_datasets_part():
    """`get_dataset`/`get_eval_dataset`/`eval_inputs` answer as before, through `env.datasets`;
    called on the class too (`Environment.get_dataset(env, ...)`, a subclass's explicit base
    call), with the part's signature."""
    env = vf.SingleTurnEnv(dataset=Dataset.from_list(rows(5)), system_prompt="S")
    assert isinstance(env.datasets, EnvDatasets)
    assert len(env.get_dataset(n=3)) == 3
    assert env.get_eval_dataset()[0]["prompt"][0] == {"role": "system", "content": "S"}
    assert len(Environment.get_dataset(env, 2)) == 2
    inputs = env.eval_inputs(2, rollouts_per_example=2)
    assert [(r["answer"], r["rollout_index"]) for r in inputs] == [
        ("0", 0),
        ("0", 1),
        ("1", 0),
        ("1", 1),
    ]
    assert list(inspect.signature(env.get_dataset).parameters) == ["n", "seed"]


def test_forwarded_values_read_through_and_renamed_methods_call_the_part():
    """`forward_attribute` (SandboxEnv's `provider`/`pool`, RayEnvironment's metadata) reads
    the part's current value of its own name and refuses assignment, as a property without a
    setter does; `forward(method, part, name)` calls the part's method named `name` with
    `method`'s signature (RayEnvironment's `get_dataset` is its local environment's)."""

    class Front:
        env_id = forward_attribute[str]("local")
        get_dataset = forward(EnvDatasets.get, "local", "get_dataset")

        def __init__(self, local: Environment) -> None:
            self.local = local

    env = vf.SingleTurnEnv(dataset=Dataset.from_list(rows(4)), env_id="first")
    front = Front(env)
    assert front.env_id == "first" and isinstance(Front.env_id, forward_attribute)
    env.env_id = "second"
    assert front.env_id == "second"
    with pytest.raises(AttributeError, match="env_id"):
        front.env_id = "third"
    assert env.env_id == "second"
    assert len(front.get_dataset(n=3)) == 3
    assert list(inspect.signature(front.get_dataset).parameters) == ["n", "seed"]


def test_a_subclass_build_dataset_override_is_what_get_dataset_uses():
    """Building goes through `env.build_dataset()`, so a classic subclass that overrides it
    (and calls `super()`) is honoured by `get_dataset` and `eval_inputs`."""
    calls: list[str] = []

    class Counting(vf.SingleTurnEnv):
        def build_dataset(self):
            calls.append("build")
            return super().build_dataset()

    env = Counting(dataset=lambda: Dataset.from_list(rows(3)))
    assert env.dataset is None  # a callable source waits for first use
    assert len(env.get_dataset()) == 3 and len(env.eval_inputs()) == 3
    assert calls == ["build", "build"]  # get_dataset; eval_inputs falls back to it (no eval set)


def test_oai_tools_reads_and_assigns_tool_defs():
    """`oai_tools` is the dict-era view of `tool_defs`, still assignable."""
    env = vf.SingleTurnEnv(dataset=Dataset.from_list(rows(1)))
    env.oai_tools = [{"name": "f", "description": "d", "parameters": {"type": "object"}}]
    assert isinstance(env.tool_defs[0], vf.Tool)
    assert env.oai_tools[0]["type"] == "function"
    assert env.oai_tools[0]["function"]["name"] == "f"


def test_run_sync_runs_on_the_environments_threads_shared_with_the_rubric():
    env = vf.SingleTurnEnv(dataset=Dataset.from_list(rows(1)))
    assert isinstance(env.threads, UserThreads) and env.threads.pool is None

    async def run():
        return await env.run_sync(lambda x, y=0: (threading.current_thread().name, x + y), 1, y=2)

    name, value = asyncio.run(run())
    assert name.startswith("vf-user") and value == 3
    assert env.rubric.executor is env.executor is env.threads.pool
    asyncio.run(env.teardown())
    assert env.threads.pool is None


def test_after_scoring_overrides_still_run_once_per_rollout():
    """The base `after_scoring` is skipped as a no-op; a subclass's (or an instance's) runs."""
    seen: list[str] = []

    class Releasing(vf.SingleTurnEnv):
        async def after_scoring(self, state):
            seen.append("class")

    env = Releasing(dataset=Dataset.from_list(rows(1)))
    plain = vf.SingleTurnEnv(dataset=Dataset.from_list(rows(1)))

    async def instance_hook(state):
        seen.append("instance")

    plain.after_scoring = instance_hook
    for e in (env, plain):
        state = e.new_state({"question": "q", "answer": "a"}, None, "m")
        asyncio.run(e.score_states([state], group=False))
    assert seen == ["class", "instance"]


def test_output_record_reads_input_fields_and_plain_dict_states():
    """A state made from an input answers the input's fields (as upstream's `State`), and a
    plain dict state (`save_utils.state_to_output`) records the same way."""
    row = {"prompt": [{"role": "user", "content": "q"}], "answer": "4", "example_id": 7}
    for state in (State(input=row), dict(input=row, **row)):
        out = output_record(state)
        assert (out["example_id"], out["answer"], out["prompt"]) == (7, "4", row["prompt"])
        assert out["completion"] == [] and out["token_usage"] == {}


@pytest.mark.parametrize("scored", [False, True])
def test_a_loop_state_is_recorded_as_key_by_key(scored):
    """`output_record` reads a state of the library's own loop in one C call (issue 30 item
    1): the record is the one read key by key, and its key order too."""
    from verifiers.envs.output_records import _RECORD_FIELDS, _record_by_key

    env = vf.SingleTurnEnv(dataset=Dataset.from_list(rows(1)))
    row = {"question": "q", "answer": "4", "example_id": 3, "rollout_index": 2, "task": "t"}
    state = env.new_state(row, None, "m")
    state["completion"] = [{"role": "assistant", "content": "4"}]
    state["metrics"] = {"correct": 1.0, "reward": 5.0}  # a reserved name stays out
    state["error"] = ValueError("x")
    state["parsed_answer"] = "4"
    if scored:
        state["advantage"] = 0.5
    _RECORD_FIELDS(state)  # the one-call read applies (it raises KeyError otherwise)
    columns = ["turn", "trajectory_id", "model"]
    fast, by_key = output_record(state, columns), _record_by_key(state, columns)
    for out in (fast, by_key):
        out["timing"].pop("total"), out["timing"].pop("total_ms")
    assert list(fast) == list(by_key) and fast == by_key
    assert fast["advantage"] == (0.5 if scored else None) and fast["rollout_index"] == 2
    assert fast["error"]["error"] == "ValueError" and fast["reward"] != fast["reward"]


def test_trajectory_ids_are_distinct_128_bit_hex():
    env = vf.SingleTurnEnv(dataset=Dataset.from_list(rows(1)))
    ids = {env.new_state({"question": "q"}, None, "m")["trajectory_id"] for _ in range(1000)}
    assert len(ids) == 1000 and all(len(i) == 32 and int(i, 16) >= 0 for i in ids)


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(module, at module level?) for every `from verifiers... import` in a file."""
    tree = ast.parse(path.read_text())
    top = {id(n) for n in tree.body}
    return [
        (n.module or "", id(n) in top)
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("verifiers")
    ]


def test_no_environment_generation_import_cycle():
    """`generation` does not import the environments (it types them with a Protocol), and
    `Environment` imports `generation` once, at module level (before: lazily in three
    methods)."""
    gen = _imports(SRC / "generation.py")
    assert not [m for m, _ in gen if m.startswith("verifiers.envs")]
    env_imports = _imports(SRC / "envs" / "environment.py")
    assert ("verifiers.generation", True) in env_imports
    assert not [m for m, top in env_imports if m == "verifiers.generation" and not top]


def test_environment_has_at_most_25_methods_of_its_own():
    tree = ast.parse((SRC / "envs" / "environment.py").read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Environment")
    methods = [n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    assert len(methods) <= 25
