import gc
import logging
import math
import re
import warnings

import pytest
from datasets import Dataset
from openai import AsyncOpenAI

import verifiers as vf
from verifiers.rubrics.judge_rubric import DEFAULT_JUDGE_PROMPT, JudgeError, JudgeRubric
from verifiers.state import State
from verifiers.testing import Fault, ScriptedServer, rollout_state
from verifiers.testing import tokenizer as tok
from verifiers.testing.responders import last_text

_FIELDS = re.compile(r"Ground truth answer:\n```\n(.*?)\n```\n\nResponse:\n```\n(.*?)\n```", re.S)
BOXED = vf.Parser(extract_fn=vf.extract_boxed_answer)


def yes_if_correct(body) -> str:
    """A judge that says "yes" when the response text matches the ground truth answer."""
    m = _FIELDS.search(last_text(body))
    return "yes" if m and m.group(1).strip() == m.group(2).strip() else "no"


def judge_requests(srv):
    return [last_text(b) for b in srv.requests]


async def judge_correct(judge, prompt, completion, answer, state) -> float:
    verdict = await judge(prompt, completion, answer, state)
    return 1.0 if "yes" in verdict.lower() else 0.0


def dataset(n=4, wrong=()):
    """`What is i + i?`; the rows in `wrong` carry a wrong answer, so the judge says no."""
    return Dataset.from_list(
        [
            {"question": f"What is {i} + {i}?", "answer": str(2 * i + (1 if i in wrong else 0))}
            for i in range(n)
        ]
    )


def judge_rubric(judge_client, **kw) -> JudgeRubric:
    kw.setdefault("parser", BOXED)
    kw.setdefault("judge_model", "judge-model")
    rubric = JudgeRubric(judge_client=judge_client, **kw)
    rubric.add_reward_func(judge_correct)
    return rubric


def fast_client(srv, **kw) -> vf.OpenAIClient:
    return vf.OpenAIClient(srv.base_url, api_key="x", retry_base_delay=0.01, **kw)


def make_state(question="What is 2 + 2?", completion="The answer is \\boxed{4}.", answer="4"):
    return State(rollout_state(question, completion, answer, task="default"), trajectory=[])


@pytest.fixture
def no_openai_env(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture
def judge_server():
    with ScriptedServer(yes_if_correct) as srv:
        yield srv


# -- construction --------------------------------------------------------------------------
def test_construct_without_api_key_registers_no_reward(no_openai_env):
    """Ours: constructing needs no key (upstream 0.3.1 legacy/rubrics/judge_rubric.py built
    `AsyncOpenAI()` at once and failed); the default client reports the missing key when used."""
    rubric = JudgeRubric()
    assert rubric.funcs == []
    with pytest.raises(vf.MissingKeyError, match="OPENAI_API_KEY"):
        rubric.judge_client.chat.completions.create  # noqa: B018
    assert rubric.judge_model == "gpt-4.1-nano" and rubric.judge_prompt == DEFAULT_JUDGE_PROMPT
    for name in ("judge", "judge_client", "judge_model", "judge_prompt", "judge_sampling_args"):
        assert name in rubric.class_objects
    assert rubric.class_objects["judge"] == rubric.judge
    assert rubric.class_objects["judge_client"] is rubric.judge_client


async def test_env_client_resolved_on_first_use(no_openai_env, judge_server, monkeypatch):
    rubric = JudgeRubric(parser=BOXED)  # built before the variables exist
    monkeypatch.setenv("OPENAI_BASE_URL", judge_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "secret")
    state = make_state()
    assert await rubric.judge(state["prompt"], state["completion"], "4", state) == "yes"
    await rubric.teardown()


async def test_missing_key_for_openai_is_a_clear_error(no_openai_env):
    rubric = JudgeRubric()
    state = make_state()
    with pytest.raises(vf.MissingKeyError, match="OPENAI_API_KEY"):
        await rubric.judge(state["prompt"], state["completion"], "4", state)


# -- prompt rendering ----------------------------------------------------------------------
def test_braces_in_texts_and_template(no_openai_env):
    rubric = JudgeRubric(judge_prompt="Q={question} A={answer} R={response} {{lit}} {other}")
    prompt = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": 'Return {"a": {x}} and {0}'},
    ]
    completion = [{"role": "assistant", "content": "\\frac{1}{2} {response}"}]
    text = rubric.render_judge_prompt(prompt, completion, "{answer} {}")
    # `{{` unescapes as str.format would; substituted texts are never substituted into.
    assert (
        text == 'Q=Return {"a": {x}} and {0} A={answer} {} R=\\frac{1}{2} {response} {lit} {other}'
    )


def test_question_from_string_prompt_and_multimodal_message(no_openai_env):
    rubric = JudgeRubric(judge_prompt="{question}|{response}")
    assert rubric.render_judge_prompt("plain?", "reply", "") == "plain?|reply"
    parts = [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "u"}}]
    assert rubric.render_judge_prompt([{"role": "user", "content": parts}], [], "") == "look|"


async def test_braces_reach_the_judge_intact(judge_server):
    rubric = JudgeRubric(judge_client=fast_client(judge_server), parser=BOXED)
    state = make_state(question='Give {"k": {v}} back', completion="\\boxed{{1}}", answer="{1}")
    verdict = await rubric.judge(state["prompt"], state["completion"], state["answer"], state)
    assert verdict == "yes"
    (sent,) = judge_requests(judge_server)
    assert '```\nGive {"k": {v}} back\n```' in sent and "```\n{1}\n```" in sent


# -- end to end ----------------------------------------------------------------------------
def test_judge_reward_end_to_end_with_separate_judge_server(no_openai_env, server, judge_server):
    rubric = judge_rubric(
        judge_server.base_url, judge_sampling_args={"max_tokens": 5, "temperature": 0.0}
    )
    env = vf.SingleTurnEnv(dataset=dataset(4, wrong={1}), rubric=rubric)
    outputs = env.evaluate_sync(server.base_url, "m", num_examples=4)["outputs"]
    assert [o["reward"] for o in outputs] == [1.0, 0.0, 1.0, 1.0]
    assert [o["metrics"]["judge_correct"] for o in outputs] == [1.0, 0.0, 1.0, 1.0]
    assert all(o["error"] is None for o in outputs)
    assert len(judge_server.requests) == 4 and len(server.requests) == 4
    body = judge_server.requests[0]
    assert body["model"] == "judge-model" and body["max_tokens"] == 5
    assert body["temperature"] == 0.0 and len(body["messages"]) == 1
    assert all(b["model"] == "m" for b in server.requests)


def test_token_usage_recorded(server, judge_server):
    env = vf.SingleTurnEnv(dataset=dataset(2), rubric=judge_rubric(judge_server.base_url))
    outputs = env.evaluate_sync(server.base_url, "m", num_examples=2)["outputs"]
    by_answer = {
        _FIELDS.search(last_text(b)).group(1): b["messages"] for b in judge_server.requests
    }
    for o in outputs:
        messages = by_answer[o["answer"]]
        usage = o["token_usage"]
        assert usage["judge_input_tokens"] == tok.count(tok.render_chat(messages))
        assert usage["judge_output_tokens"] == len(tok.encode("yes")) + 1  # + end token
        assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0  # the policy's, apart


async def test_verdict_cached_per_rollout(judge_server):
    rubric = judge_rubric(fast_client(judge_server))

    async def judge_again(judge, prompt, completion, answer, state) -> float:
        return float(len(await judge(prompt, completion, answer, state)))

    def judge_sync(judge, prompt, completion, answer, state):  # classic: returns a coroutine
        return judge_correct(judge, prompt, completion, answer, state)

    rubric.add_metric(judge_again)
    rubric.add_metric(judge_sync)
    states = [make_state(), make_state(completion="\\boxed{5}")]
    await rubric.score_group(states)
    assert len(judge_server.requests) == 2  # one per rollout, though three functions asked
    assert [s["reward"] for s in states] == [1.0, 0.0]
    assert states[0]["metrics"] == {"judge_correct": 1.0, "judge_again": 3.0, "judge_sync": 1.0}
    (cached,) = states[0]["judge_response"].values()
    assert cached == "yes" and states[0]["usage"]["judge_output_tokens"] == 4
    await rubric.score_rollout(states[0])  # scoring again reuses the verdict
    assert len(judge_server.requests) == 2
    await rubric.teardown()


async def test_judge_without_state_is_not_cached(judge_server):
    rubric = JudgeRubric(judge_client=fast_client(judge_server), parser=BOXED)
    s = make_state()
    for _ in range(2):
        assert await rubric.judge(s["prompt"], s["completion"], "4") == "yes"
    assert len(judge_server.requests) == 2


def test_judge_retries_on_503_then_succeeds(server):
    with ScriptedServer(yes_if_correct, faults=[Fault(status=503, times=2)]) as judge_srv:
        rubric = judge_rubric(fast_client(judge_srv, max_retries=3))
        env = vf.SingleTurnEnv(dataset=dataset(1), rubric=rubric)
        (out,) = env.evaluate_sync(server.base_url, "m", num_examples=1)["outputs"]
        assert out["reward"] == 1.0 and out["error"] is None
        assert judge_srv.request_count == 3


def test_judge_timeout_retried(server):
    faults = [Fault(kind="timeout", seconds=3.0, times=1)]
    with ScriptedServer(yes_if_correct, faults=faults) as judge_srv:
        rubric = judge_rubric(judge_srv.base_url, judge_timeout=0.3, judge_max_retries=1)
        env = vf.SingleTurnEnv(dataset=dataset(1), rubric=rubric)
        (out,) = env.evaluate_sync(server.base_url, "m", num_examples=1)["outputs"]
        assert out["reward"] == 1.0 and out["error"] is None
        assert judge_srv.request_count == 2


def test_judge_outage_is_an_infra_error_not_zero(server):
    # The judge is down for the question about 1 + 1 only; the other rollouts are unaffected.
    faults = [Fault(status=503, times=None, match=r"What is 1 \+ 1\?")]
    with ScriptedServer(yes_if_correct, faults=faults) as judge_srv:
        rubric = judge_rubric(judge_srv.base_url, judge_max_retries=1)
        env = vf.SingleTurnEnv(dataset=dataset(3), rubric=rubric)
        results = env.evaluate_sync(server.base_url, "m", num_examples=3)
        ok0, down, ok2 = results["outputs"]
        assert ok0["reward"] == 1.0 and ok2["reward"] == 1.0
        assert ok0["error"] is None and ok2["error"] is None
        assert math.isnan(down["reward"]) and math.isnan(down["metrics"]["judge_correct"])
        err = down["error"]
        assert err["error"] == "RewardError" and err["infra"] is True
        assert "JudgeError" in err["message"] and "503" in err["message"]
        assert "judge_response" not in down  # failures are not cached
        assert judge_srv.request_count == 2 + 2  # two good rollouts + 1 try and 1 retry


async def test_judge_error_type(judge_server):
    judge_server.set_faults([Fault(status=503, times=None)])
    rubric = JudgeRubric(judge_client=fast_client(judge_server, max_retries=1))
    s = make_state()
    with pytest.raises(JudgeError) as info:
        await rubric.judge(s["prompt"], s["completion"], "4", s)
    assert isinstance(info.value, vf.InfraError)
    assert isinstance(info.value.__cause__, vf.ModelConnectionError)
    assert "judge_response" not in s and "judge_input_tokens" not in s["usage"]


def test_concurrency_cap_respected(server, in_flight):
    async def slow_judge(body):
        await in_flight.hold(0.05)
        return yes_if_correct(body)

    with ScriptedServer(slow_judge) as judge_srv:
        rubric = judge_rubric(judge_srv.base_url, judge_max_concurrent=2)
        env = vf.SingleTurnEnv(dataset=dataset(8), rubric=rubric)
        outputs = env.evaluate_sync(server.base_url, "m", num_examples=8)["outputs"]
    assert [o["reward"] for o in outputs] == [1.0] * 8
    assert in_flight.peak == 2


def test_bare_async_openai_judge_client(server, judge_server):
    oai = AsyncOpenAI(base_url=judge_server.base_url, api_key="x")
    rubric = judge_rubric(oai)
    assert rubric.judge_client is oai and rubric.class_objects["judge_client"] is oai
    env = vf.SingleTurnEnv(dataset=dataset(2, wrong={0}), rubric=rubric)
    outputs = env.evaluate_sync(server.base_url, "m", num_examples=2)["outputs"]
    assert [o["reward"] for o in outputs] == [0.0, 1.0]


def test_rubric_group_sums_with_other_rubric(server, judge_server):
    def boxed(completion) -> float:
        return 1.0 if "\\boxed{" in completion[-1]["content"] else 0.0

    group = vf.RubricGroup([judge_rubric(judge_server.base_url), vf.Rubric([boxed], [0.5])])
    env = vf.SingleTurnEnv(dataset=dataset(2, wrong={1}), rubric=group)
    outputs = env.evaluate_sync(server.base_url, "m", num_examples=2)["outputs"]
    assert [o["reward"] for o in outputs] == [1.5, 0.5]
    assert outputs[0]["metrics"]["judge_correct"] == 1.0 and outputs[0]["metrics"]["boxed"] == 1.0


def test_classic_env_module_via_load_environment(no_openai_env, server, judge_server):
    env = vf.load_environment("classic-judge-env", judge_base_url=judge_server.base_url)
    outputs = env.evaluate_sync(server.base_url, "m", num_examples=4)["outputs"]
    # Example 3 carries a wrong answer; every reply is boxed (format weight 0.5).
    assert [o["reward"] for o in outputs] == [1.5, 1.5, 0.5, 1.5]
    assert all(o["token_usage"]["judge_input_tokens"] > 0 for o in outputs)
    assert all(b["max_tokens"] == 8 for b in judge_server.requests)


@pytest.mark.parametrize("given", [False, True], ids=["url", "given-client"])
def test_repeated_sync_evaluations_leave_no_open_sessions(server, judge_server, caplog, given):
    gc.collect()  # what earlier tests left for the collector is not this test's business
    client = fast_client(judge_server) if given else judge_server.base_url
    env = vf.SingleTurnEnv(dataset=dataset(2), rubric=judge_rubric(client))
    with warnings.catch_warnings(record=True) as caught, caplog.at_level(logging.ERROR):
        warnings.simplefilter("always")
        for _ in range(2):  # each evaluate_sync runs its own event loop, then closes it
            outputs = env.evaluate_sync(server.base_url, "m", num_examples=2)["outputs"]
            assert [o["reward"] for o in outputs] == [1.0, 1.0]
        del (
            env,
            client,
        )  # nobody calls teardown(): what a dead loop left open is reported on collection
        gc.collect()
    unclosed = [str(w.message) for w in caught if "nclosed" in str(w.message)]
    unclosed += [r.getMessage() for r in caplog.records if "nclosed" in r.getMessage()]
    assert unclosed == []


async def test_teardown_closes_only_owned_clients(judge_server):
    given = fast_client(judge_server)
    rubric = JudgeRubric(judge_client=given, parser=BOXED)
    s = make_state()
    await rubric.judge(s["prompt"], s["completion"], "4", s)
    await rubric.teardown()
    assert given._sessions and not next(iter(given._sessions.values())).session.closed
    await given.aclose()

    owned = JudgeRubric(judge_client=judge_server.base_url, parser=BOXED)
    await owned.judge(s["prompt"], s["completion"], "5", s)
    await owned.teardown()
    assert not owned._client._sessions


def test_exported():
    assert vf.JudgeRubric is JudgeRubric


async def test_judge_endpoint_by_url_and_key_variable(judge_server, monkeypatch):
    monkeypatch.setenv("MY_JUDGE_KEY", "secret")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # must not be used
    rubric = JudgeRubric(
        parser=BOXED, judge_base_url=judge_server.base_url, judge_api_key_var="MY_JUDGE_KEY"
    )
    s = make_state()
    assert await rubric.judge(s["prompt"], s["completion"], "4", s) == "yes"
    assert rubric._client.base_url == judge_server.base_url.rstrip("/")
    assert rubric._client._headers["Authorization"] == "Bearer secret"
    await rubric.teardown()

    # Only the key variable: the endpoint comes from OPENAI_BASE_URL.
    monkeypatch.setenv("OPENAI_BASE_URL", judge_server.base_url)
    rubric = JudgeRubric(parser=BOXED, judge_api_key_var="MY_JUDGE_KEY")
    assert await rubric.judge(s["prompt"], s["completion"], "5") == "no"
    await rubric.teardown()


def test_judge_endpoint_arguments_are_checked(judge_server, monkeypatch):
    monkeypatch.delenv("NOT_SET_JUDGE_KEY", raising=False)
    with pytest.raises(vf.MissingKeyError, match="NOT_SET_JUDGE_KEY"):
        JudgeRubric(judge_base_url=judge_server.base_url, judge_api_key_var="NOT_SET_JUDGE_KEY")
    with pytest.raises(vf.ConfigError, match="not both"):
        JudgeRubric(judge_client=judge_server.base_url, judge_base_url=judge_server.base_url)


# -- rules first, judge second -------------------------------------------------------------
STRICT_BOXED = vf.Parser(extract_fn=lambda text: vf.extract_boxed_answer(text, strict=True))


class ExactThenJudge(vf.JudgeFallbackRubric):
    rule_metric = "exact"

    async def check(self, prompt, completion, answer, response, state):
        if response == "settled":  # e.g. a wrong option letter: no judge needed
            return 0.0, True
        return float(response == answer), False


def grading_judge(body) -> str:
    """Grades by the response shown: "x4" is equivalent (A), "junk" gets prose, others B."""
    m = _FIELDS.search(last_text(body))
    response = m.group(2).strip() if m else ""
    return {"x4": "Final Judgment: \\boxed{A}", "junk": "I think it is right."}.get(
        response, "\\boxed{B}"
    )


@pytest.mark.parametrize(
    "completion, reward, judged, verdict",
    [
        ("\\boxed{4}", 1.0, False, "unset"),  # the rules accept: the judge is never asked
        ("\\boxed{x4}", 1.0, True, "A"),  # the rules reject, the judge recovers it
        ("\\boxed{5}", 0.0, True, "B"),
        ("\\boxed{junk}", 0.0, True, None),  # a verdict in prose is no verdict
        ("\\boxed{settled}", 0.0, False, "unset"),  # the rules settled it
        ("no box at all", 0.0, False, "unset"),  # no answer: nothing to check or judge
        ("\\boxed{" + "9" * 30 + "}", 0.0, False, "unset"),  # longer than max_answer_chars
    ],
)
async def test_judge_fallback_grades_once_rules_first(completion, reward, judged, verdict):
    with ScriptedServer(grading_judge) as judge_srv:
        judge = JudgeRubric(parser=STRICT_BOXED, judge_client=fast_client(judge_srv))
        rubric = ExactThenJudge(parser=STRICT_BOXED, judge=judge, max_answer_chars=20)
        assert rubric.get_reward_func_names() == ["correct_answer", "exact", "judge_score"]
        s = make_state(completion=completion, answer="4")
        await rubric.score_rollout(s)
        assert s["reward"] == reward
        assert s["metrics"]["judge_score"] == (1.0 if verdict == "A" else 0.0)
        assert s["metrics"]["exact"] == (1.0 if completion == "\\boxed{4}" else 0.0)
        # reward and both metrics share one grading: at most one judge request per rollout
        assert judge_srv.request_count == (1 if judged else 0)
        assert s.get("judge_verdict", "unset") == verdict
        await rubric.teardown()
        await judge.judge_client.aclose()


async def test_judge_fallback_without_judge_and_with_a_dead_one():
    rubric = ExactThenJudge(parser=STRICT_BOXED)
    assert rubric.get_reward_func_names() == ["correct_answer", "exact"]
    s = make_state(completion="\\boxed{x4}", answer="4")
    await rubric.score_rollout(s)
    assert s["reward"] == 0.0
    with pytest.raises(vf.ConfigError, match="max_answer_chars"):
        ExactThenJudge(parser=STRICT_BOXED, max_answer_chars=0)

    dead = JudgeRubric(
        parser=STRICT_BOXED, judge_client="http://127.0.0.1:9/v1", judge_max_retries=0
    )
    rubric = ExactThenJudge(parser=STRICT_BOXED, judge=dead)
    s = make_state(completion="\\boxed{x4}", answer="4")
    await rubric.score_rollout(s)
    assert math.isnan(s["reward"]) and s["error"]["infra"] is True  # not a silent 0
    await rubric.teardown()
