"""deepdive takes upstream's load_environment arguments (prime-environments deepdive, 2025-12)
with upstream's meaning and defaults; each one changes what is loaded or how it runs."""

import inspect
import logging
from pathlib import Path

import deepdive as dd
import pytest

import verifiers as vf
from verifiers.testing import ScriptedServer, write_hub_dataset
from verifiers.testing.responders import Reply

# name -> upstream default
UPSTREAM = {
    "max_turns": 32,
    "serper_api_key_var": "SERPER_API_KEY",
    "judge_api_key_var": "OPENAI_API_KEY",
    "judge_model": "gpt-4.1-mini",
    "judge_base_url": None,
    "max_search_results": 10,
    "max_response_chars": 20_000,
    "serper_timeout": 15.0,
    "dataset_name": "zai-org/DeepDive",
    "dataset_split": "qa_rl",
    "dataset_test_size": 0.1,
    "dataset_seed": 2025,
    "redundancy_penalty_weight": 0.0,
    "debug": False,
    "finish_with_tool": False,
}
LOCAL = {"source": "sample", "search_backend": "local"}


def test_every_upstream_argument_has_upstream_default(monkeypatch):
    params = inspect.signature(dd.load_environment).parameters
    assert {k: params[k].default for k in UPSTREAM} == UPSTREAM
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # read at the first judgement only
    env = dd.load_environment(**LOCAL, **UPSTREAM)
    assert env.max_turns == 32 and env.max_search_results == 10
    assert env.max_response_chars == 20_000 and not env.debug


def test_finish_with_tool_is_off_by_default():
    env = dd.load_environment(**LOCAL, judge_model=None)
    assert [t["name"] for t in env.tool_defs] == ["search", "open", "click"]
    assert env.eval_inputs()[0]["prompt"][-1]["content"].endswith("final answer in \\boxed{}.")
    on = dd.load_environment(**LOCAL, judge_model=None, finish_with_tool=True)
    assert [t["name"] for t in on.tool_defs] == ["search", "open", "click", "finish"]


def test_serper_key_variable_and_timeout_pick_the_http_backend(monkeypatch):
    monkeypatch.setenv("DD_TEST_SERPER", "secret")
    env = dd.load_environment(
        source="sample",
        serper_api_key_var="DD_TEST_SERPER",
        serper_timeout=3.5,
        search_url="http://127.0.0.1:9/search",
        judge_model=None,
    )
    assert isinstance(env.backend, dd.HTTPSearchBackend) and env.backend.timeout == 3.5
    monkeypatch.delenv("DD_TEST_SERPER")
    local = dd.load_environment(
        source="sample", serper_api_key_var="DD_TEST_SERPER", judge_model=None
    )
    assert isinstance(local.backend, dd.LocalSearchBackend)  # no key: the offline stand-in


def test_judge_key_variable_meanings(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    url = "http://127.0.0.1:9/v1"
    default = dd.load_environment(**LOCAL, judge_base_url=url)
    assert default.rubric.judge_client.api_key == "sk-openai"
    keyless = dd.load_environment(**LOCAL, judge_base_url=url, judge_api_key_var=None)
    assert keyless.rubric.judge_client.api_key == "EMPTY"
    monkeypatch.setenv("DD_JUDGE_KEY", "sk-judge")
    named = dd.load_environment(**LOCAL, judge_base_url=url, judge_api_key_var="DD_JUDGE_KEY")
    assert named.rubric.judge_client.api_key == "sk-judge"
    assert named.rubric.judge_model == "gpt-4.1-mini"


def test_redundancy_penalty_weight_and_caps():
    env = dd.load_environment(
        **LOCAL,
        judge_model=None,
        redundancy_penalty_weight=0.5,
        max_turns=4,
        max_search_results=2,
        max_response_chars=300,
    )
    weights = dict(zip([f.__name__ for f in env.rubric.funcs], env.rubric.weights, strict=True))
    assert weights["redundancy_penalty"] == -0.5
    assert (env.max_turns, env.max_search_results, env.max_response_chars) == (4, 2, 300)


def rows(n: int) -> list[dict]:
    return [{"id": i, "question": f"q{i}?", "answer": f"a{i}"} for i in range(n)]


def test_dataset_test_size_and_seed_split_the_rows():
    def split(**kw):
        env = dd.load_environment(source=rows(40), search_backend="local", judge_model=None, **kw)
        train = [r["info"]["id"] for r in env.get_dataset()]
        test = [r["info"]["id"] for r in env.get_eval_dataset()]
        return train, test

    train, test = split()
    assert (len(train), len(test)) == (36, 4) and not set(train) & set(test)
    assert len(split(dataset_test_size=0.25)[1]) == 10
    assert set(split(dataset_seed=7)[1]) != set(test)


@pytest.fixture
def local_hub(tmp_path: Path, monkeypatch) -> Path:
    """Two splits of the default config, read by `datasets` like a hub repository."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return write_hub_dataset(
        tmp_path / "hub",
        {s: [{"id": 1, "question": f"{s} question?", "answer": "x"}] for s in ("qa_rl", "qa_sft")},
    )


def test_dataset_name_and_split_pick_the_rows(local_hub):
    def load(**kw) -> list[str]:
        env = dd.load_environment(
            source="hub",
            dataset_name=str(local_hub),
            search_backend="local",
            judge_model=None,
            **kw,
        )
        return [r["info"]["raw_question"] for r in env.get_dataset()]

    assert load() == ["qa_rl question?"]
    assert load(dataset_split="qa_sft") == ["qa_sft question?"]


async def test_debug_logs_the_tool_results(caplog):
    env = dd.load_environment(**LOCAL, judge_model=None, debug=True, max_turns=2)
    turns = iter([Reply(tool_calls=[{"name": "search", "arguments": {"query": "Varnholt"}}])])

    def agent(body) -> Reply:
        return next(turns, Reply(content="\\boxed{Dunmere}"))

    async with ScriptedServer(agent) as model:
        client = vf.OpenAIClient(model.base_url, api_key="x")
        try:
            with caplog.at_level(logging.INFO, logger="deepdive"):
                await env.generate(env.eval_inputs()[:1], client, "m")
        finally:
            await client.aclose()
    logged = [r.getMessage() for r in caplog.records if r.name == "deepdive"]
    assert any(m.startswith("deepdive tool result: Result 0: Varnholt") for m in logged), logged


def test_unknown_argument_is_refused_naming_the_accepted_ones():
    with pytest.raises(vf.ConfigError, match=r"does not take 'search_api_key_var'.*serper"):
        vf.load_environment("deepdive", source="sample", search_api_key_var="X")
