import json

import pytest
from datasets import Dataset

import verifiers as vf


def client_for(srv):
    return vf.OpenAIClient(srv.base_url, api_key="x", retry_base_delay=0.01)


def exact(completion, answer) -> float:
    return 1.0 if vf.extract_boxed_answer(completion[-1]["content"] or "") == answer else 0.0


def math_env(n=2, offset=1):
    rows = [
        {"question": f"What is {i} + {i}?", "answer": str(2 * i)} for i in range(offset, offset + n)
    ]
    return vf.SingleTurnEnv(dataset=Dataset.from_list(rows), rubric=vf.Rubric(funcs=[exact]))


def add(a: int, b: int) -> int:
    """Add."""
    return a + b


def tool_env():
    rows = [{"question": "What is 20 + 22?", "answer": "42", "info": {"source": "t"}}]

    def used_tools(state) -> float:
        return float(sum(state.get("tool_call_counts", {}).values()))

    return vf.ToolEnv(
        tools=[add],
        dataset=Dataset.from_list(rows),
        rubric=vf.Rubric(funcs=[exact, used_tools], weights=[1.0, 0.0]),
    )


def test_rows_are_tagged_and_renumbered():
    group = vf.EnvGroup([math_env(2), tool_env()], env_names=["m", "t"])
    ds = group.get_dataset()
    assert ds["example_id"] == [0, 1, 2]
    infos = [json.loads(i) for i in ds["info"]]
    assert [i["env_id"] for i in infos] == ["m", "m", "t"]
    assert infos[2]["source"] == "t"


def test_routing_scoring_and_metric_union(server):
    group = vf.EnvGroup([math_env(2), tool_env()], env_names=["m", "t"])
    outputs = group.evaluate_sync(client_for(server), "model", num_examples=-1)["outputs"]
    assert [o["info"]["env_id"] for o in outputs] == ["m", "m", "t"]
    assert all(o["reward"] == 1.0 and o["error"] is None for o in outputs)
    assert outputs[2]["metrics"]["used_tools"] == 1.0 and outputs[2]["metrics"]["add_calls"] == 1.0
    names = set(outputs[2]["metrics"])
    assert all(set(o["metrics"]) == names for o in outputs)  # the same names on every row
    assert outputs[0]["metrics"]["used_tools"] == 0.0
    assert "tools" not in server.requests[0] and "tools" in server.requests[-1]


def test_nested_groups(server):
    inner = vf.EnvGroup([math_env(1, 1), math_env(1, 5)], env_names=["a", "b"])
    outer = vf.EnvGroup([inner, tool_env()], env_names=["inner", "tools"])
    infos = [json.loads(i) for i in outer.get_dataset()["info"]]
    assert [i["env_id"] for i in infos] == [["inner", "a"], ["inner", "b"], "tools"]
    outputs = outer.evaluate_sync(client_for(server), "model", num_examples=-1)["outputs"]
    assert [o["reward"] for o in outputs] == [1.0, 1.0, 1.0]
    assert [o["answer"] for o in outputs] == ["2", "10", "42"]


def test_legacy_task_column_routes(server):
    group = vf.EnvGroup([math_env(1), tool_env()], env_names=["math", "tools"])
    rows = [
        {
            "prompt": [{"role": "user", "content": "What is 20 + 22?"}],
            "answer": "42",
            "task": "tools",
        }
    ]
    out = group.generate_sync(rows, client_for(server), "model")["outputs"][0]
    assert out["error"] is None and out["metrics"]["add_calls"] == 1.0


def test_unknown_route_is_an_error_on_that_rollout(server):
    group = vf.EnvGroup([math_env(1), tool_env()], env_names=["math", "tools"])
    rows = [
        {
            "prompt": [{"role": "user", "content": "What is 1 + 1?"}],
            "answer": "2",
            "info": {"env_id": "chess"},
        },
        {
            "prompt": [{"role": "user", "content": "What is 1 + 1?"}],
            "answer": "2",
            "info": {"env_id": "math"},
        },
    ]
    outputs = group.generate_sync(rows, client_for(server), "model")["outputs"]
    assert outputs[0]["error"]["error"] == "ConfigError"
    assert "unknown environment 'chess'" in outputs[0]["error"]["message"]
    assert outputs[1]["reward"] == 1.0


def test_bad_group_configuration():
    with pytest.raises(vf.ConfigError, match="at least one"):
        vf.EnvGroup([])
    with pytest.raises(vf.ConfigError, match="2 environments but 1 names"):
        vf.EnvGroup([math_env(), math_env()], env_names=["x"])
    with pytest.raises(vf.ConfigError, match="unique"):
        vf.EnvGroup([math_env(), math_env()], env_names=["x", "x"])


@pytest.mark.parametrize(
    ("env_id", "count"),
    [("classic-tool-env", 3), ("classic-stateful-env", 2), ("classic-env-group", 6)],
)
def test_classic_tool_and_group_envs_through_vf_eval(run_vf_eval, tmp_path, server, env_id, count):
    rows, _ = run_vf_eval(tmp_path, env_id, server.base_url, "-n", -1, "-r", 1)
    assert len(rows) == count
    assert all(r["reward"] == 1.0 and r["error"] is None for r in rows), [r["error"] for r in rows]
    if env_id == "classic-stateful-env":
        assert all(r["metrics"]["session_calls"] == 1.0 for r in rows)
