"""Upstream's load_environment arguments, with upstream's meanings and defaults, checked on the
bundled sample (which has an image row), a local dataset folder, and real local HTTP servers
standing in for Serper and a keyless judge."""

from __future__ import annotations

import json

import hle
import pytest
from aiohttp import web
from hle.tools import python

import verifiers as vf
from verifiers import ConfigError, MissingKeyError
from verifiers.testing import serve_app

SAMPLE_ROWS = [json.loads(line) for line in hle.SAMPLE.read_text().splitlines()]
IMAGE_ROW = next(r for r in SAMPLE_ROWS if r["image"])


def ids(env) -> list[str]:
    return [i["id"] for i in env.dataset["info"]]


def test_multimodal_keeps_image_rows_as_image_parts():
    text_only = hle.load_environment(source="sample")
    both = hle.load_environment(source="sample", multimodal=True)
    assert IMAGE_ROW["id"] not in ids(text_only)
    assert ids(both) == [r["id"] for r in SAMPLE_ROWS]
    row = next(r for r in both.dataset if r["info"]["id"] == IMAGE_ROW["id"])
    assert row["info"]["has_image"] is True
    state = both.new_state(row, None, "m")
    assert state["prompt"][-1]["content"] == [
        {"type": "text", "text": IMAGE_ROW["question"]},
        {"type": "image_url", "image_url": {"url": IMAGE_ROW["image"]}},
    ]
    text_row = both.dataset[0]
    assert (
        both.new_state(text_row, None, "m")["prompt"][-1]["content"]
        == text_row["prompt"][-1]["content"]
    )


def test_system_prompt_default_replace_and_none():
    default = hle.load_environment(source="sample").dataset[0]["prompt"]
    assert default[0] == {"role": "system", "content": hle.ANSWER_TYPES["exactMatch"]}
    mine = hle.load_environment(source="sample", system_prompt="Answer tersely.")
    assert {r["prompt"][0]["content"] for r in mine.dataset} == {"Answer tersely."}
    none = hle.load_environment(source="sample", system_prompt=None)
    assert all([m["role"] for m in r["prompt"]] == ["user"] for r in none.dataset)


def test_dataset_name_and_split_reach_the_real_loader(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    repo = tmp_path / "hle-copy"
    repo.mkdir()
    (repo / "test.jsonl").write_text(hle.SAMPLE.read_text())
    (repo / "validation.jsonl").write_text(json.dumps(SAMPLE_ROWS[2]) + "\n")
    test = hle.load_environment(dataset_name=str(repo), source="hub")
    val = hle.load_environment(dataset_name=str(repo), dataset_split="validation", source="hub")
    assert ids(test) == [r["id"] for r in SAMPLE_ROWS if not r["image"]]
    assert ids(val) == [SAMPLE_ROWS[2]["id"]]


def test_judge_model_is_sent(monkeypatch):
    env = hle.load_environment(source="sample", judge_model="my-judge")
    assert env.rubric.judge_model == "my-judge"
    assert hle.load_environment(source="sample").rubric.judge_model == "gpt-4.1-mini"


def test_keyless_local_judge_gets_empty_not_the_openai_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-local-judges")
    env = hle.load_environment(source="sample", judge_base_url="http://127.0.0.1:9/v1")
    assert env.rubric.judge_client.api_key == "EMPTY"
    monkeypatch.setenv("MY_JUDGE_KEY", "k-123")
    named = hle.load_environment(
        source="sample", judge_base_url="http://127.0.0.1:9/v1", judge_api_key_var="MY_JUDGE_KEY"
    )
    assert named.rubric.judge_client.api_key == "k-123"


def test_tools_off_is_single_turn():
    env = hle.load_environment(source="sample", max_turns=3)
    assert isinstance(env, vf.SingleTurnEnv) and not env.tool_defs


def test_tools_need_the_search_key_only_when_on(monkeypatch):
    monkeypatch.delenv("SERPER_API_KEY", raising=False)
    hle.load_environment(source="sample")  # no key needed without tools
    with pytest.raises(MissingKeyError, match="SERPER_API_KEY"):
        hle.load_environment(source="sample", tools=True)


@pytest.mark.parametrize(
    ("expr", "out"),
    [("(3 + 4) ** 2 / 7", "7.0"), ("-2 * 5 % 3", "2"), ("2 ** 100000", "Error: exponent")],
)
def test_python_tool_is_arithmetic_only(expr, out):
    assert python(expr).startswith(out)
    assert python("__import__('os').getcwd()").startswith("Error: only numbers")


@pytest.fixture
async def serper():
    """A real HTTP server speaking Serper's search API, recording what it receives."""
    seen: list[tuple[str | None, dict]] = []

    async def search(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append((request.headers.get("X-API-KEY"), body))
        hits = [
            {"title": f"hit {i}", "link": f"https://e.x/{i}", "snippet": "x" * 50} for i in range(8)
        ]
        return web.json_response({"organic": hits})

    app = web.Application()
    app.router.add_post("/search", search)
    async with serve_app(app) as base:
        yield f"{base}/search", seen


async def test_tools_on_is_a_tool_env_with_search_and_python(serper, monkeypatch):
    url, seen = serper
    monkeypatch.setenv("SERPER_API_KEY", "serper-k")
    env = hle.load_environment(
        source="sample", tools=True, max_turns=4, max_response_chars=120, search_url=url
    )
    assert isinstance(env, vf.ToolEnv) and env.max_turns == 4
    assert sorted(env.tool_map) == ["python", "search"]
    out = await env.tool_map["search"](query="tiling dominoes", max_results=3)
    assert seen == [("serper-k", {"q": "tiling dominoes"})]
    assert out.startswith("Results for: tiling dominoes\n1. hit 0")
    assert len(out) <= 121 and "hit 3" not in out  # max_response_chars cuts it
    assert env.tool_map["python"](expr="6*7") == "42"


def test_unknown_argument_is_a_clear_error():
    with pytest.raises(TypeError, match="unexpected keyword argument 'judge_template'"):
        hle.load_environment(source="sample", judge_template="x")
    with pytest.raises(ConfigError, match="does not take 'judge_template'.*dataset_name"):
        vf.load_environment("hle", source="sample", judge_template="x")
