"""i3-math takes upstream's load_environment arguments (prime-environments i3_math, 2025-12)
with upstream's meaning and defaults; each one changes what is loaded or how it is judged."""

import inspect
from pathlib import Path

import pytest
from i3_math import load_environment

import verifiers as vf
from verifiers.testing import write_hub_dataset

# name -> upstream default
UPSTREAM = {
    "dataset_name": "PrimeIntellect/INTELLECT-3-RL",
    "dataset_subset": "math",
    "dataset_split": "train",
    "dataset_shuffle": False,
    "difficulty_key": "avg@8_qwen3_4b_thinking_2507",
    "min_avg_reward": 0.0,
    "max_avg_reward": 1.0,
    "judge_model": None,
    "judge_base_url": None,
    "judge_sampling_args": {},
    "judge_api_key_var": None,
}


def problems(env: vf.Environment) -> list[str]:
    return [q.split("\n\n", 1)[1] for q in env.dataset["question"]]


def test_every_upstream_argument_has_upstream_default():
    params = inspect.signature(load_environment).parameters
    ours = {k: params[k].default for k in UPSTREAM}
    ours["judge_sampling_args"] = ours["judge_sampling_args"] or {}  # None means {}
    assert ours == UPSTREAM
    env = load_environment(source="sample", **UPSTREAM)
    assert len(env.dataset) == 17  # the defaults filter nothing


def test_pass_rate_window_and_difficulty_key_change_the_rows():
    all_rows = problems(load_environment(source="sample"))
    hard = problems(load_environment(source="sample", min_avg_reward=0.0, max_avg_reward=0.5))
    assert 0 < len(hard) < len(all_rows) and set(hard) < set(all_rows)
    other_key = problems(
        load_environment(
            source="sample",
            difficulty_key="avg@8_qwen3_4b_instruct_2507",
            max_avg_reward=0.5,
        )
    )
    assert other_key != hard  # the window is read from the named column


def test_dataset_shuffle_reorders_with_upstream_seed():
    plain = problems(load_environment(source="sample"))
    shuffled = problems(load_environment(source="sample", dataset_shuffle=True))
    assert shuffled != plain and sorted(shuffled) == sorted(plain)
    assert problems(load_environment(source="sample", dataset_shuffle=True, seed=42)) == shuffled


@pytest.fixture
def local_hub(tmp_path: Path, monkeypatch) -> Path:
    """Two configs with two splits each, read by `datasets` like a hub repository."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / ".cache"))
    return write_hub_dataset(
        tmp_path / "hub",
        {
            (c, s): [{"question": f"{c}-{s} problem", "answer": "1"}]
            for c in ("math", "other")
            for s in ("train", "test")
        },
    )


def test_dataset_name_subset_split_pick_the_rows(local_hub):
    def load(**kw):
        env = load_environment(source="hub", dataset_name=str(local_hub), difficulty_key=None, **kw)
        return problems(env)

    assert load() == ["math-train problem"]
    assert load(dataset_subset="other", dataset_split="test") == ["other-test problem"]


def test_judge_without_key_variable_sends_empty_like_upstream(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-the-judge")
    env = load_environment(
        source="sample",
        judge_model="j",
        judge_base_url="http://127.0.0.1:9/v1",
        judge_sampling_args={"temperature": 0.3},
    )
    judge = env.rubric.judge_rubric
    assert judge.judge_client.api_key == "EMPTY"
    assert str(judge.judge_client.base_url).startswith("http://127.0.0.1:9/v1")
    assert judge.judge_sampling_args == {"temperature": 0.3}
    monkeypatch.setenv("I3_JUDGE_KEY", "sk-judge")
    named = load_environment(source="sample", judge_model="j", judge_api_key_var="I3_JUDGE_KEY")
    assert named.rubric.judge_rubric.judge_client.api_key == "sk-judge"


def test_unknown_argument_is_refused_naming_the_accepted_ones():
    with pytest.raises(vf.ConfigError, match=r"does not take 'diamond'.*dataset_shuffle"):
        vf.load_environment("i3-math", source="sample", diamond=False)


async def test_keyless_judge_request_carries_the_key_empty(monkeypatch):
    """Through a real HTTP server: the Authorization header a local judge receives."""
    from aiohttp import web

    seen: list[str | None] = []

    async def completions(request: web.Request) -> web.Response:
        seen.append(request.headers.get("Authorization"))
        message = {"role": "assistant", "content": "Final Judgment: \\boxed{A}"}
        return web.json_response(
            {
                "id": "c",
                "object": "chat.completion",
                "created": 0,
                "model": "j",
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            }
        )

    app = web.Application()
    app.router.add_post("/v1/chat/completions", completions)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-the-judge")
    try:
        env = load_environment(
            source="sample", judge_model="j", judge_base_url=f"http://127.0.0.1:{port}/v1"
        )
        judge = env.rubric.judge_rubric
        prompt = [{"role": "user", "content": "Solve it."}]
        completion = [{"role": "assistant", "content": "\\boxed{\\text{one half}}"}]
        reply = await judge.judge(prompt, completion, "1/2", {})
        assert "boxed{A}" in reply
        await judge.teardown()
    finally:
        await runner.cleanup()
    assert seen == ["Bearer EMPTY"]
