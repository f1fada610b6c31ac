import asyncio
import math
import threading
from typing import Literal

import pytest
from datasets import Dataset
from pydantic import BaseModel

import verifiers as vf
from verifiers.testing import Reply, ScriptedServer, ScriptResponder
from verifiers.testing.responders import last_message


# -- schemas -------------------------------------------------------------------------------
def search(
    query: str,
    limit: int = 5,
    mode: Literal["fast", "exact"] = "fast",
    tags: list[str] | None = None,
) -> str:
    """Search the corpus.

    Args:
        query: What to look for.
        limit: How many results to return.
        mode: Matching strategy.
        tags: Only documents with these tags.
    """
    return query


def numpy_style(x: float, y: dict[str, int]) -> float:
    """Scale a value.

    Parameters
    ----------
    x : float
        The value.
    y : dict
        Factors by name.
    """
    return x


def sphinx_style(path: str) -> str:
    """Read a file.

    :param path: Where the file is.
    """
    return path


class Point(BaseModel):
    x: int
    y: int


def distance(a: Point, b: Point) -> float:
    """Distance between two points."""
    return ((a.x - b.x) ** 2 + (a.y - b.y) ** 2) ** 0.5


def test_google_docstring_and_hints():
    tool = vf.build_tool(search)
    assert tool.description == "Search the corpus."
    props = tool.parameters["properties"]
    assert props["query"] == {"type": "string", "description": "What to look for."}
    assert props["limit"]["type"] == "integer" and props["limit"]["default"] == 5
    assert props["mode"]["enum"] == ["fast", "exact"]
    assert props["tags"]["anyOf"][0] == {"type": "array", "items": {"type": "string"}}
    assert tool.parameters["required"] == ["query"]
    assert tool.parameters["additionalProperties"] is False
    assert tool.openai_tool["function"]["name"] == "search"


def test_numpy_and_sphinx_docstrings():
    assert vf.build_tool(numpy_style).parameters["properties"]["x"]["description"] == "The value."
    assert (
        vf.build_tool(sphinx_style).parameters["properties"]["path"]["description"]
        == "Where the file is."
    )


def test_pydantic_model_parameters():
    tool = vf.build_tool(distance)
    assert "$defs" in tool.parameters and "Point" in tool.parameters["$defs"]
    args = tool.validate({"a": {"x": 0, "y": 0}, "b": {"x": 3, "y": 4}})
    assert distance(**args) == 5.0


def test_unsupported_parameter_type_named_at_construction():
    def bad(sock: threading.Lock) -> str:  # not describable as JSON
        return ""

    with pytest.raises(vf.ConfigError, match="tool 'bad': parameter 'sock'"):
        vf.build_tool(bad)


def test_lambda_and_varargs_rejected():
    with pytest.raises(vf.ConfigError, match="lambda"):
        vf.build_tool(lambda x: x)

    def many(*items: int) -> int:
        return 0

    with pytest.raises(vf.ConfigError, match=r"\*items"):
        vf.build_tool(many)


def test_args_to_skip_vanish_from_schema():
    def run(command: str, sandbox_id: str, state: dict) -> str:
        return command

    tool = vf.build_tool(run, args_to_skip=["sandbox_id", "state"])
    assert list(tool.parameters["properties"]) == ["command"] and tool.parameters["required"] == [
        "command"
    ]
    with pytest.raises(vf.ConfigError, match="unknown parameters"):
        vf.build_tool(run, args_to_skip=["nope"])


# -- ToolEnv ---------------------------------------------------------------------------------
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: First addend.
        b: Second addend.
    """
    return a + b


def dataset(n=3):
    return Dataset.from_list(
        [{"question": f"What is {i} + {10 * i}?", "answer": str(11 * i)} for i in range(1, n + 1)]
    )


def correct(completion, answer) -> float:
    return 1.0 if vf.extract_boxed_answer(completion[-1]["content"] or "") == answer else 0.0


def client_for(srv):
    return vf.OpenAIClient(srv.base_url, api_key="x", retry_base_delay=0.01)


def test_tool_env_round_trip(server):
    env = vf.ToolEnv(tools=[add], dataset=dataset(), rubric=vf.Rubric(funcs=[correct]))
    outputs = env.evaluate_sync(client_for(server), "m", num_examples=3)["outputs"]
    for o in outputs:
        roles = [m["role"] for m in o["completion"]]
        assert roles == ["assistant", "tool", "assistant"]
        assert o["completion"][1]["tool_call_id"] == o["completion"][0]["tool_calls"][0]["id"]
        assert o["reward"] == 1.0 and o["stop_condition"] == "no_tools_called"
        assert o["metrics"]["total_tool_calls"] == 1.0 and o["metrics"]["add_calls"] == 1.0
    first_request = server.requests[0]
    assert first_request["tools"][0]["function"]["name"] == "add"
    assert (
        first_request["tools"][0]["function"]["parameters"]["properties"]["a"]["description"]
        == "First addend."
    )


def two_calls(name_a, args_a, name_b, args_b):
    def responder(body):
        if last_message(body)["role"] == "tool":
            return "done"
        return Reply(
            tool_calls=[
                {"name": name_a, "arguments": args_a},
                {"name": name_b, "arguments": args_b},
            ]
        )

    return responder


def test_tool_calls_of_one_turn_run_concurrently():
    barrier = asyncio.Barrier(2)

    async def left(x: int) -> str:
        """Wait for the other call."""
        await asyncio.wait_for(barrier.wait(), 5)
        return "left"

    async def right(x: int) -> str:
        """Wait for the other call."""
        await asyncio.wait_for(barrier.wait(), 5)
        return "right"

    with ScriptedServer(two_calls("left", {"x": 1}, "right", {"x": 2})) as srv:
        env = vf.ToolEnv(tools=[left, right], dataset=dataset(1), parallel_tool_calls=True)
        out = env.evaluate_sync(client_for(srv), "m", num_examples=1)["outputs"][0]
    tool_msgs = [m for m in out["completion"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_msgs] == ["left", "right"]  # both met at the barrier


def test_sync_tools_run_in_threads_concurrently():
    barrier = threading.Barrier(2, timeout=5)

    def ping(x: int) -> str:
        """Meet the other call."""
        barrier.wait()
        return threading.current_thread().name

    with ScriptedServer(two_calls("ping", {"x": 1}, "ping", {"x": 2})) as srv:
        env = vf.ToolEnv(tools=[ping], dataset=dataset(1), parallel_tool_calls=True)
        out = env.evaluate_sync(client_for(srv), "m", num_examples=1)["outputs"][0]
    contents = [m["content"] for m in out["completion"] if m["role"] == "tool"]
    assert all(c.startswith("vf-user") for c in contents), contents
    assert out["metrics"]["ping_calls"] == 2.0


def test_tool_calls_of_one_turn_run_in_order_by_default():
    """Upstream 0.1.8/0.1.12 ToolEnv.env_response calls a turn's tools one after another, in
    order; tools that depend on each other's effects (write, then run) rely on it."""
    log: list[str] = []

    async def write(x: int) -> str:
        """Write."""
        await asyncio.sleep(0.05)  # a slow first call must still finish first
        log.append(f"write {x}")
        return "written"

    def run(x: int) -> str:
        """Run."""
        log.append(f"run {x}")
        return "ran"

    with ScriptedServer(two_calls("write", {"x": 1}, "run", {"x": 2})) as srv:
        env = vf.ToolEnv(tools=[write, run], dataset=dataset(1))
        out = env.evaluate_sync(client_for(srv), "m", num_examples=1)["outputs"][0]
    assert log == ["write 1", "run 2"]
    assert [m["content"] for m in out["completion"] if m["role"] == "tool"] == ["written", "ran"]


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("multiply", {"a": 1}, "unknown tool 'multiply'. Available tools: add."),
        ("add", '{"a": 1, "b": ', "arguments for tool 'add' are not valid JSON"),
        ("add", "[1, 2]", "must be a JSON object, got list"),
        (
            "add",
            {"a": "one", "b": 2},
            "invalid arguments for tool 'add': a: Input should be a valid integer",
        ),
        ("add", {"a": 1}, "invalid arguments for tool 'add': b: Field required"),
        ("add", {"a": 1, "b": 2, "c": 3}, "c: Extra inputs are not permitted"),
    ],
)
def test_bad_calls_get_an_actionable_tool_message(name, arguments, expected):
    rules = [(lambda body: last_message(body)["role"] == "tool", "ok, giving up")]
    first = Reply(tool_calls=[{"name": name, "arguments": arguments}])
    with ScriptedServer(ScriptResponder([*rules, (lambda body: True, first)])) as srv:
        env = vf.ToolEnv(tools=[add], dataset=dataset(1))
        out = env.evaluate_sync(client_for(srv), "m", num_examples=1)["outputs"][0]
    assert out["error"] is None
    assert expected in out["completion"][1]["content"]


def test_tool_exception_is_reported_to_the_model():
    def divide(a: int, b: int) -> float:
        """Divide."""
        return a / b

    with ScriptedServer(two_calls("divide", {"a": 1, "b": 0}, "divide", {"a": 4, "b": 2})) as srv:
        env = vf.ToolEnv(tools=[divide], dataset=dataset(1))
        out = env.evaluate_sync(client_for(srv), "m", num_examples=1)["outputs"][0]
    contents = [m["content"] for m in out["completion"] if m["role"] == "tool"]
    assert contents == ["Error: ZeroDivisionError: division by zero", "2.0"]


def test_stop_errors_end_the_rollout_with_an_error():
    class Fatal(Exception):
        pass

    def explode(a: int, b: int) -> int:
        """Always fails."""
        raise Fatal("reactor offline")

    env = vf.ToolEnv(tools=[explode], dataset=dataset(1), stop_errors=[Fatal])
    with ScriptedServer() as srv:
        out = env.evaluate_sync(client_for(srv), "m", num_examples=1)["outputs"][0]
    assert out["error"]["error"] == "ToolCallError" and "reactor offline" in out["error"]["message"]
    assert out["stop_condition"] == "has_error"


def test_infra_stop_errors_keep_the_infra_flag():
    class SearchDown(vf.InfraError):
        pass

    def search_web(a: int, b: int) -> int:
        """Fails like an unreachable backend."""
        raise SearchDown("search API returned 503")

    env = vf.ToolEnv(tools=[search_web], dataset=dataset(1), stop_errors=[SearchDown])
    with ScriptedServer() as srv:
        out = env.evaluate_sync(client_for(srv), "m", num_examples=1)["outputs"][0]
    assert out["error"]["error"] == "SearchDown" and out["error"]["infra"] is True
    assert math.isnan(out["reward"])


def test_tool_timeout():
    async def slow(a: int, b: int) -> int:
        """Takes forever."""
        await asyncio.sleep(30)
        return 0

    env = vf.ToolEnv(tools=[slow], dataset=dataset(1), tool_timeout=0.2)
    with ScriptedServer() as srv:
        out = env.evaluate_sync(client_for(srv), "m", num_examples=1)["outputs"][0]
    assert out["completion"][1]["content"] == "Error: tool 'slow' timed out after 0.2s"


def test_duplicate_tool_names_and_add_remove():
    with pytest.raises(vf.ConfigError, match="duplicate tool name 'add'"):
        vf.ToolEnv(tools=[add, add], dataset=dataset(1))
    env = vf.ToolEnv(tools=[add], dataset=dataset(1))
    env.add_tool(search)
    assert [t["name"] for t in env.tool_defs] == ["add", "search"]
    env.remove_tool("add")
    assert [t["name"] for t in env.tool_defs] == ["search"]
    assert env.oai_tools[0]["type"] == "function"
    with pytest.raises(vf.ConfigError, match="no tool named 'add'"):
        env.remove_tool(add)


def test_per_row_tool_defs(server):
    rows = [
        {
            "question": "What is 2 + 3?",
            "answer": "5",
            "info": {"tool_defs": [vf.build_tool(add).tool_def]},
        }
    ]
    env = vf.ToolEnv(
        tools=[add, search], dataset=Dataset.from_list(rows), rubric=vf.Rubric(funcs=[correct])
    )
    out = env.evaluate_sync(client_for(server), "m", num_examples=1)["outputs"][0]
    assert [t["function"]["name"] for t in server.requests[0]["tools"]] == ["add"]
    assert out["reward"] == 1.0


# -- StatefulToolEnv ----------------------------------------------------------------------------
class Ledger(vf.StatefulToolEnv):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_tool(self.deposit, args_to_skip=["account"])

    async def setup_state(self, state, **kwargs):
        state["account"] = {"balance": 0, "owner": state["example_id"]}
        return state

    def deposit(self, a: int, b: int, account: dict) -> int:
        """Deposit a + b into the account."""
        account["balance"] += a + b
        return account["balance"]

    def update_tool_args(self, tool_name, tool_args, messages, state, **kwargs):
        return {**tool_args, "account": state["account"]}


def test_hidden_arguments_are_injected(server):
    env = Ledger(
        dataset=dataset(2), rubric=vf.Rubric(funcs=[lambda state: state["account"]["balance"]])
    )
    sent = env.tool_defs[0]["parameters"]
    assert set(sent["properties"]) == {"a", "b"} and "account" not in sent.get("required", [])
    out = env.evaluate_sync(client_for(server), "m", num_examples=2)["outputs"]
    assert [o["reward"] for o in out] == [11.0, 22.0]
    assert set(server.requests[0]["tools"][0]["function"]["parameters"]["properties"]) == {"a", "b"}


def test_model_cannot_smuggle_hidden_arguments():
    reply = Reply(
        tool_calls=[{"name": "deposit", "arguments": {"a": 1, "b": 1, "account": {"balance": 99}}}]
    )
    rules = [
        (lambda body: last_message(body)["role"] == "tool", "done"),
        (lambda body: True, reply),
    ]
    with ScriptedServer(ScriptResponder(rules)) as srv:
        env = Ledger(dataset=dataset(1))
        out = env.evaluate_sync(client_for(srv), "m", num_examples=1)["outputs"][0]
    assert "account: set by the environment, not by the model" in out["completion"][1]["content"]


class StateLedger(vf.StatefulToolEnv):
    """Ledger's hidden argument declared with `args_from_state`: no `update_tool_args`."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_tool(self.deposit, args_from_state=["account", "state"])

    async def setup_state(self, state, **kwargs):
        state["account"] = {"balance": 0}
        return state

    def deposit(self, a: int, b: int, account: dict, state: vf.State) -> int:
        """Deposit a + b into the account."""
        account["balance"] += a + b
        state["deposits"] = state.get("deposits", 0) + 1
        return account["balance"]


def test_args_from_state_need_no_update_tool_args(server):
    """StatefulToolEnv.add_tool(args_from_state=...) (ours; SandboxEnv's `bash`, PythonEnv's
    `python` and mini-swe-agent-plus's tools use it): the arguments vanish from the schema and
    the default `update_tool_args` fills each from the state key of its name, `state` with the
    state itself; other tools' arguments pass as they are; an environment declaring none must
    still implement `update_tool_args`."""
    env = StateLedger(dataset=dataset(2), rubric=vf.Rubric(funcs=[lambda state: state["deposits"]]))
    assert set(env.tool_defs[0]["parameters"]["properties"]) == {"a", "b"}
    out = env.evaluate_sync(client_for(server), "m", num_examples=2)["outputs"]
    assert [o["reward"] for o in out] == [1.0, 1.0] and all(o.get("error") is None for o in out)
    state = vf.State(account={"balance": 5})
    args = env.update_tool_args("deposit", {"a": 1, "b": 2}, [], state)
    assert args == {"a": 1, "b": 2, "account": {"balance": 5}, "state": state}
    env.add_tool(add)
    assert env.update_tool_args("add", {"a": 1, "b": 2}, [], state) == {"a": 1, "b": 2}
    env.remove_tool("deposit")
    env.remove_tool("add")
    with pytest.raises(NotImplementedError, match="must implement update_tool_args"):
        env.update_tool_args("add", {"a": 1}, [], state)


class Forgetful(vf.StatefulToolEnv):
    def update_tool_args(self, tool_name, tool_args, messages, state, **kwargs):
        return tool_args


def test_missing_hidden_argument_is_an_env_error(server):
    def run(a: int, b: int, secret: str) -> str:
        """Uses a secret."""
        return secret

    env = Forgetful(dataset=dataset(1))
    env.add_tool(run, args_to_skip=["secret"])
    out = env.evaluate_sync(client_for(server), "m", num_examples=1)["outputs"][0]
    assert out["error"]["error"] == "ToolCallError" and "secret" in out["error"]["message"]


def test_oai_tools_dict_era_name(server):
    env = vf.SingleTurnEnv(dataset=dataset(1))
    env.oai_tools = [vf.build_tool(add).openai_tool]  # how 0.1.x environments set tools
    assert env.tool_defs[0]["function"]["name"] == "add"
    env.evaluate_sync(client_for(server), "m", num_examples=1)
    assert server.requests[0]["tools"][0]["function"]["name"] == "add"
    tool_env = vf.ToolEnv(tools=[add], dataset=dataset(1))
    assert tool_env.oai_tools[0]["type"] == "function"
