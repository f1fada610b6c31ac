"""JudgeRubric the way classic environments use it: `judge_client` is a real openai client,
subclasses override `judge` and call `chat.completions.create` / `.parse` on it, reward
functions pass their `**kwargs` to `judge`, and 0.1.2's spellings and sync `judge` calls."""

from __future__ import annotations

import json

import openai
import pytest
from pydantic import BaseModel

import verifiers as vf
from verifiers.rubrics.judge_rubric import JudgeError, JudgeRubric
from verifiers.state import State
from verifiers.testing import Fault, ScriptedServer, rollout_state
from verifiers.testing.responders import last_text


def make_state(completion: str = "4", answer: str = "4") -> State:
    return State(rollout_state("What is 2 + 2?", completion, answer, task="default"), trajectory=[])


def says_yes_if_equal(body) -> str:
    text = last_text(body)
    answer = text.split("Ground truth answer:\n```\n")[1].split("\n```")[0]
    response = text.split("Response:\n```\n")[1].split("\n```")[0]
    return "yes" if answer == response else "no"


@pytest.fixture
def judge_server():
    with ScriptedServer(says_yes_if_equal) as srv:
        yield srv


@pytest.fixture
def env_endpoint(judge_server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", judge_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    return judge_server


async def test_default_judge_client_is_a_real_async_openai(env_endpoint):
    """upstream 0.3.1 legacy/rubrics/judge_rubric.py: without a judge_client the rubric's
    `judge_client` is `AsyncOpenAI()` (from OPENAI_BASE_URL / OPENAI_API_KEY), also given to
    reward functions as `judge_client`; classic code calls `chat.completions.create` on it."""
    rubric = JudgeRubric(judge_model="jm")
    assert isinstance(rubric.judge_client, openai.AsyncOpenAI)
    assert rubric.class_objects["judge_client"] is rubric.judge_client
    assert str(rubric.judge_client.base_url).rstrip("/") == env_endpoint.base_url.rstrip("/")

    async def direct(judge_client, judge_model, prompt) -> float:
        reply = await judge_client.chat.completions.create(
            model=judge_model,
            messages=[
                {
                    "role": "user",
                    "content": "Ground truth answer:\n```\n1\n```\n\nResponse:\n```\n1\n```",
                }
            ],
        )
        return float(reply.choices[0].message.content == "yes")

    rubric.add_reward_func(direct)
    state = make_state()
    await rubric.score_rollout(state)
    assert state["reward"] == 1.0 and state["error"] is None
    assert env_endpoint.requests[0]["model"] == "jm"
    await rubric.teardown()


async def test_default_client_appears_once_a_key_is_set(judge_server, monkeypatch):
    """Ours: built without a key, the rubric gets its `AsyncOpenAI` once one is set (upstream
    0.3.1 legacy/rubrics/judge_rubric.py needed the key at construction)."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    rubric = JudgeRubric()
    assert not isinstance(rubric.judge_client, openai.AsyncOpenAI)
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("OPENAI_BASE_URL", judge_server.base_url)

    def has_client(judge_client) -> float:
        return float(isinstance(judge_client, openai.AsyncOpenAI))

    rubric.add_reward_func(has_client)
    state = make_state()
    await rubric.score_rollout(state)
    assert state["reward"] == 1.0
    await rubric.teardown()


async def test_endpoint_arguments_give_an_async_openai(judge_server, monkeypatch):
    """Ours (judge_base_url / judge_api_key_var) with upstream 0.3.1's client type: the rubric's
    `judge_client` is an `AsyncOpenAI` for that endpoint and key."""
    monkeypatch.setenv("MY_KEY", "sekret")
    rubric = JudgeRubric(judge_base_url=judge_server.base_url, judge_api_key_var="MY_KEY")
    client = rubric.judge_client
    assert isinstance(client, openai.AsyncOpenAI) and client.api_key == "sekret"
    state = make_state()
    assert await rubric.judge(state["prompt"], state["completion"], "4", state) == "yes"
    await rubric.teardown()


class Verdict(BaseModel):
    correct: bool


class StructuredJudge(JudgeRubric):
    """The hle / llm_writing_detection pattern: `judge` overridden to call `.parse`."""

    async def judge(self, prompt, completion, answer, state, **kwargs):
        reply = await self.judge_client.chat.completions.parse(
            model=self.judge_model,
            messages=[{"role": "user", "content": f"is {completion[-1]['content']} == {answer}?"}],
            response_format=Verdict,
        )
        return reply.choices[0].message.parsed.correct


async def test_subclass_overriding_judge_with_structured_output():
    """upstream 0.3.1 legacy/rubrics/judge_rubric.py: subclasses replace `judge` and use
    `self.judge_client.chat.completions.parse` with a pydantic response format."""

    def structured(body) -> str:
        assert body["response_format"]["type"] == "json_schema"
        return json.dumps({"correct": "4 == 4" in last_text(body)})

    with ScriptedServer(structured) as srv:
        rubric = StructuredJudge(
            judge_client=openai.AsyncOpenAI(base_url=srv.base_url, api_key="x")
        )

        async def reward(judge, prompt, completion, answer, state, **kwargs) -> float:
            return 1.0 if await judge(prompt, completion, answer, state, **kwargs) else 0.0

        rubric.add_reward_func(reward)
        good, bad = make_state("4"), make_state("5")
        await rubric.score_group([good, bad])
    assert [good["reward"], bad["reward"]] == [1.0, 0.0]


async def test_judge_takes_the_reward_functions_kwargs(judge_server):
    """upstream 0.1.8 legacy judge_rubric.py callers (browsecomp, i3_math) pass their reward
    function's `**kwargs` on to `self.judge(...)`; ours accepts and ignores them (0.3.1's
    signature would raise TypeError, scoring 0)."""

    class Browse(JudgeRubric):
        def __init__(self, **kw):
            super().__init__(**kw)
            self.add_reward_func(self.correct)

        async def correct(self, prompt, completion, answer, state, **kwargs) -> float:
            verdict = await self.judge(prompt, completion, answer, state, **kwargs)
            return float(verdict == "yes")

    rubric = Browse(judge_client=openai.AsyncOpenAI(base_url=judge_server.base_url, api_key="x"))
    state = make_state()
    await rubric.score_rollout(state)
    assert state["reward"] == 1.0 and state["error"] is None
    assert rubric.logger.name == "verifiers.rubrics.rubric.Browse"


class FakeCompletions:
    def __init__(self, reply: str | Exception) -> None:
        self.reply = reply
        self.calls: list[dict] = []

    async def create(self, **kwargs):
        self.calls.append(kwargs)
        if isinstance(self.reply, Exception):
            raise self.reply
        message = type("M", (), {"content": self.reply})()
        return type("R", (), {"choices": [type("C", (), {"message": message})()], "usage": None})()


class FakeClient:
    def __init__(self, reply: str | Exception) -> None:
        self.chat = type("Chat", (), {"completions": FakeCompletions(reply)})()


async def test_client_like_objects_are_called_as_upstream():
    """upstream 0.3.1 legacy/rubrics/judge_rubric.py: `judge` calls
    `judge_client.chat.completions.create(model=..., messages=[user prompt], **sampling)` with
    max_tokens renamed max_completion_tokens and None values dropped; a failure raises a
    RuntimeError (ours: `JudgeError`, an InfraError and a RuntimeError)."""
    fake = FakeClient("yes")
    rubric = JudgeRubric(
        judge_client=fake,
        judge_model="jm",
        judge_sampling_args={"max_tokens": 7, "temperature": None, "top_p": 0.5},
    )
    state = make_state()
    assert await rubric.judge(state["prompt"], state["completion"], "4", state) == "yes"
    (call,) = fake.chat.completions.calls
    assert call["model"] == "jm" and call["max_completion_tokens"] == 7 and call["top_p"] == 0.5
    assert "temperature" not in call and call["messages"][0]["role"] == "user"

    broken = JudgeRubric(judge_client=FakeClient(ConnectionError("down")))
    with pytest.raises(RuntimeError) as info:
        await broken.judge(state["prompt"], state["completion"], "4", make_state())
    assert isinstance(info.value, JudgeError) and isinstance(info.value, vf.InfraError)


async def test_failed_verdict_is_not_fetched_again_by_later_functions():
    """Ours: reward functions of a rollout run one after the other (upstream 0.3.1
    legacy/rubrics/rubric.py); once the judge failed for a prompt, later ones get the same
    JudgeError without another round of retries. The rollout is an infra error, never 0."""
    fake = FakeClient(ConnectionError("down"))
    rubric = JudgeRubric(judge_client=fake)

    async def first(judge, prompt, completion, answer, state) -> float:
        return float(await judge(prompt, completion, answer, state) == "yes")

    async def second(judge, prompt, completion, answer, state) -> float:
        return float(await judge(prompt, completion, answer, state) == "no")

    rubric.add_reward_func(first)
    rubric.add_reward_func(second)
    state = make_state()
    await rubric.score_group([state])
    assert len(fake.chat.completions.calls) == 1
    assert state["error"]["infra"] is True and state["reward"] != state["reward"]  # NaN


async def test_0_1_2_spellings_and_sync_judge_calls(judge_server):
    """upstream v0.1.2 rubrics/judge_rubric.py: `JudgeRubric(client=..., model=...)` (extra
    keywords, set as attributes; ours also uses them as the judge) and a sync `judge` that sync
    reward functions call directly (ours: from a worker thread it returns the verdict)."""
    sync_client = openai.OpenAI(base_url=judge_server.base_url, api_key="x")
    rubric = JudgeRubric(client=sync_client, model="old-judge")
    assert rubric.client is sync_client and rubric.model == "old-judge"
    assert rubric.judge_client is sync_client and rubric.judge_model == "old-judge"

    def sync_reward(prompt, completion, answer, state, **kwargs) -> float:
        return 1.0 if "yes" in rubric.judge(prompt, completion, answer, state, **kwargs) else 0.0

    rubric.add_reward_func(sync_reward)
    good, bad = make_state("4"), make_state("5")
    await rubric.score_group([good, bad])
    assert [good["reward"], bad["reward"]] == [1.0, 0.0]
    assert all(b["model"] == "old-judge" for b in judge_server.requests)


async def test_503_through_an_async_openai_is_retried_by_our_client():
    """Ours: a real AsyncOpenAI given as judge_client is used as configuration for our client
    (retries on 5xx with backoff) while `judge_client` stays that object (upstream 0.3.1
    legacy/rubrics/judge_rubric.py relied on the SDK's own retries)."""
    with ScriptedServer(says_yes_if_equal, faults=[Fault(status=503, times=1)]) as srv:
        oai = openai.AsyncOpenAI(base_url=srv.base_url, api_key="x")
        rubric = JudgeRubric(judge_client=oai, judge_max_retries=2)
        assert rubric.judge_client is oai
        state = make_state()
        assert await rubric.judge(state["prompt"], state["completion"], "4", state) == "yes"
        assert srv.request_count == 2
        await rubric.teardown()


async def test_unreachable_judge_called_directly_is_an_infra_error():
    """Ours: a reward function calling a judge through `AsyncOpenAI` itself (upstream 0.3.1
    legacy/rubrics/judge_rubric.py subclasses do) that cannot reach it makes the rollout an
    infra error (NaN, `infra: True`); upstream scored it 0.0."""
    dead = openai.AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key="x", max_retries=0)

    async def asks(prompt) -> float:
        await dead.chat.completions.create(model="j", messages=[{"role": "user", "content": "q"}])
        return 1.0

    def bad_logic(completion) -> float:
        raise ValueError("a bug, not infrastructure")

    state = make_state()
    await vf.Rubric(funcs=[asks]).score_rollout(state)
    assert state["reward"] != state["reward"] and state["error"]["infra"] is True
    state = make_state()
    await vf.Rubric(funcs=[bad_logic]).score_rollout(state)
    assert state["error"]["infra"] is False
