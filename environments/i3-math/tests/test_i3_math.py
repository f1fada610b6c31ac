"""i3-math: grading tables, think tags, the judge fallback, the difficulty filter, bad rows,
and a vf-eval run against the scripted server."""

import asyncio
import functools
import json
import tomllib
from pathlib import Path

import i3_math
import pytest
from i3_math import TASK, load_environment, parse_verdict

import verifiers as vf
from verifiers.testing import (
    assert_stuck_grading_does_not_stall,
    environment_fixture,
    judged_environment,
    score_completion,
    scripted_eval,
)
from verifiers.testing.responders import last_text

PATHOLOGICAL = "10^{10^{10}}"


score = functools.partial(score_completion, task="i3-math")


env = environment_fixture(load_environment, source="sample", math_verify_workers=2)


#: (gold, response, reward): i3-math's grading table, tests/data/grading.toml
TABLE = [
    (row["gold"], row["response"], row["reward"])
    for row in tomllib.loads((Path(__file__).parent / "data" / "grading.toml").read_text())["rows"]
]


async def test_grading_table(env):
    states = await asyncio.gather(
        *(score(env, f"Working... so $\\boxed{{{resp}}}$.", gold) for gold, resp, _ in TABLE)
    )
    got = [(g, r, s["reward"]) for (g, r, _), s in zip(TABLE, states, strict=True)]
    assert got == [(g, r, want) for g, r, want in TABLE]
    for s in states:
        assert s["error"] is None
        assert s["metrics"] == {"correct_answer": s["reward"], "math_verify_score": s["reward"]}


COMPLETIONS = [
    # un-boxed prose never scores, however plainly it states the number
    ("After computing, we get the final value 42.", 0.0),
    ("The answer is 42", 0.0),
    ("\\boxed{42}", 1.0),
    ("First \\boxed{41}, then on reflection \\boxed{42}.", 1.0),  # the last box counts
    ("\\boxed{}", 0.0),
    ("\\boxed{42", 0.0),  # never closed
    # reasoning in tags: only what follows the last </think> is the answer
    ("<think>maybe \\boxed{41}</think>So \\boxed{42}.", 1.0),
    ("<think>it is \\boxed{42}</think>I am not sure.", 0.0),
    ("<think>it is \\boxed{42} and then the tokens ran out", 0.0),  # unclosed: no answer
    # the template injected <think>: the completion only closes it
    ("the sum is 41... no, 42 \\boxed{41}</think>Final: \\boxed{42}", 1.0),
    ("it is \\boxed{42}</think>That is all.", 0.0),
    ("a</think>b<think>c \\boxed{42}", 0.0),  # a second block never closed
]


async def test_extraction_and_think_tags(env):
    states = await asyncio.gather(*(score(env, text, "42") for text, _ in COMPLETIONS))
    assert [(t, s["reward"]) for (t, _), s in zip(COMPLETIONS, states, strict=True)] == COMPLETIONS


def test_require_think_close_for_templates_that_inject_think():
    lenient, strict = vf.boxed_answer_parser(), vf.boxed_answer_parser(require_think_close=True)
    truncated = [{"role": "assistant", "content": "so it might be \\boxed{42} but"}]
    closed = [{"role": "assistant", "content": "thinking</think>\\boxed{42}"}]
    assert (lenient.parse_answer(truncated), strict.parse_answer(truncated)) == ("42", "")
    assert (lenient.parse_answer(closed), strict.parse_answer(closed)) == ("42", "42")
    env = load_environment(source="sample", require_think_close=True)
    assert env.parser.parse_answer(truncated) == env.rubric.parser.parse_answer(truncated) == ""


async def test_answer_length_cap(env):
    at_cap, over_cap = "7" * 500, "7" * 501
    short, long = await asyncio.gather(
        score(env, f"\\boxed{{{at_cap}}}", at_cap), score(env, f"\\boxed{{{over_cap}}}", over_cap)
    )
    assert (short["reward"], long["reward"]) == (1.0, 0.0)
    with pytest.raises(vf.ConfigError, match="max_answer_chars"):
        load_environment(source="sample", max_answer_chars=0)


async def test_pathological_answer_times_out_without_stalling_others(env):
    easy = [(env, f"\\boxed{{\\frac{{{n}}}{{4}}}}", str(n / 4)) for n in range(1, 7)]
    stuck = (env, f"\\boxed{{{PATHOLOGICAL}}}", "7")
    took = await assert_stuck_grading_does_not_stall(score, stuck, easy)
    assert took < env.rubric.math.hard_timeout_seconds + 10.0  # killed at the latest


# -- the judge fallback ------------------------------------------------------------------------
VERDICTS = [
    ("Final Judgment: \\boxed{A}", "A"),
    ("The candidate says one half, which is 1/2.\nFinal Judgment: $\\boxed{A}$.", "A"),
    ("B", "B"),
    ("Final Judgment: \\boxed{\\text{C}}", "C"),
    ("<think>could be \\boxed{B}</think>Final Judgment: \\boxed{A}", "A"),
    ("no, the answer is wrong ... although yes, it has the right form", None),
    ("yes", None),
    ("Final Judgment: \\boxed{A}\nOn second thought it is wrong.", None),
    ("Final Judgment: \\boxed{A or B}", None),
    ("Final Judgment: \\boxed{D}", None),
    ("<think>\\boxed{A}", None),
    ("", None),
]


def test_parse_verdict_is_strict():
    assert [(r, parse_verdict(r)) for r, _ in VERDICTS] == VERDICTS


JUDGE_VERDICTS = {  # the scripted judge's reply by candidate answer
    "\\text{one half}": "It is the same number.\nFinal Judgment: \\boxed{A}",
    "\\text{a half, roughly}": "no, this is not exact ... yes, it is close to it",
    "\\text{zero point five}": "Final Judgment: \\boxed{A}\nActually no, B.",
    "\\text{two}": "Final Judgment: \\boxed{B}",
}


@pytest.fixture(scope="module")
def judged():
    with judged_environment(
        load_environment, JUDGE_VERDICTS, "Final Judgment: \\boxed{C}"
    ) as judged:
        yield judged


async def test_judge_fallback_only_for_what_math_verify_rejects(judged):
    env, judge_server = judged
    before = len(judge_server.requests)
    cases = [
        ("\\boxed{0.5}", 1.0, 0.0, False),  # math-verify accepts: judge not asked
        ("The answer is one half.", 0.0, 0.0, False),  # no box: not judged
        ("\\boxed{\\text{one half}}", 1.0, 1.0, True),
        ("\\boxed{\\text{a half, roughly}}", 0.0, 0.0, True),  # verbose "no ... yes"
        ("\\boxed{\\text{zero point five}}", 0.0, 0.0, True),  # box, then second thoughts
        ("\\boxed{\\text{two}}", 0.0, 0.0, True),
    ]
    states = await asyncio.gather(*(score(env, text, "1/2") for text, *_ in cases))
    for (text, reward, judge_score, asked), s in zip(cases, states, strict=True):
        assert s["error"] is None, text
        assert (s["reward"], s["metrics"]["judge_score"]) == (reward, judge_score), text
        assert ("judge_verdict" in s) == asked, text
    assert len(judge_server.requests) - before == sum(c[3] for c in cases)
    # the judge sees the question, the gold answer and only the boxed answer
    prompts = [last_text(b) for b in judge_server.requests[before:]]
    assert all("Solve it." in p and "<<<\n1/2\n>>>" in p for p in prompts)
    assert not any("\\boxed{\\text" in p for p in prompts)


def test_judge_arguments_are_checked(monkeypatch):
    with pytest.raises(vf.ConfigError, match="need judge_model"):
        load_environment(source="sample", judge_base_url="http://127.0.0.1:9/v1")
    monkeypatch.delenv("I3_TEST_JUDGE_KEY", raising=False)
    with pytest.raises(vf.MissingKeyError, match="I3_TEST_JUDGE_KEY"):
        load_environment(source="sample", judge_model="j", judge_api_key_var="I3_TEST_JUDGE_KEY")


# -- dataset: difficulty filter and bad rows --------------------------------------------------
def rows(*rates, key="avg@8_qwen3_4b_thinking_2507"):
    return [{"question": f"q{i}", "answer": str(i), key: r} for i, r in enumerate(rates)]


def test_difficulty_filter_inclusive_bounds_and_unrated_rows():
    data = rows(0.0, 0.25, 0.5, None, 0.75, 1.0)
    env = load_environment(source=data, min_avg_reward=0.25, max_avg_reward=0.75)
    assert env.dataset["answer"] == ["1", "2", "4"]
    env = load_environment(source=data, min_avg_reward=0.25, max_avg_reward=0.75, keep_unrated=True)
    assert env.dataset["answer"] == ["1", "2", "3", "4"]
    assert [json.loads(i)["avg_reward"] for i in env.dataset["info"]] == [0.25, 0.5, None, 0.75]
    assert len(load_environment(source=data).dataset) == 6  # no filter asked: all rows
    sample = load_environment(source="sample", min_avg_reward=0.1, max_avg_reward=0.9)
    assert 0 < len(sample.dataset) < 17
    assert all(
        0.1 <= json.loads(i)["avg_reward"] <= 0.9
        and q.startswith(i3_math.INSTRUCTION_PROMPT + "\n\n")
        for i, q in zip(sample.dataset["info"], sample.dataset["question"], strict=True)
    )


def test_difficulty_filter_fails_loudly():
    with pytest.raises(vf.ConfigError, match="no column 'avg@8_qwen3_4b_thinking_2507'"):
        load_environment(source=rows(0.5, key="other"), min_avg_reward=0.2)
    with pytest.raises(vf.ConfigError, match="no row .* is left"):
        load_environment(source=rows(0.1, 0.2), min_avg_reward=0.5)
    with pytest.raises(vf.ConfigError, match="row 0: difficulty column .* 'easy'"):
        load_environment(source=rows("easy", "hard"), max_avg_reward=0.5)
    with pytest.raises(vf.ConfigError, match="min_avg_reward <= max_avg_reward"):
        load_environment(source=rows(0.1), min_avg_reward=0.8, max_avg_reward=0.2)


def test_broken_rows_are_named():
    bad = [
        {"question": "fine", "answer": "1"},
        {"question": "  ", "answer": "2"},
        {"question": "no answer", "answer": None},
    ]
    with pytest.raises(vf.ConfigError, match=r"2 unusable row\(s\): row 1: question .*; row 2"):
        load_environment(source=bad)
    numbers = [{"question": "integer answers are written out", "answer": 7}]
    assert TASK.prepare_dataset(vf.load_dataset_source(None, source=numbers))["answer"] == ["7"]
    with pytest.raises(vf.ConfigError, match="lacks column"):
        load_environment(source=[{"question": "q", "solution": "1"}])
    with pytest.raises(vf.ConfigError, match="does not exist"):
        load_environment(source="/nonexistent/rows.jsonl")


# -- vf-eval end to end ------------------------------------------------------------------------
SOLUTIONS = {
    "perimeter of 30 cm": "<think>w = 5, l = 10</think>The area is $\\boxed{50}$.",
    "remainder 3 when divided by 7": "</think>\\boxed{679}",  # template-injected <think>
    "\\log_2(x+6)": "x = 2, since x = -8 is not allowed.",  # right number, no box
    "sum of 9": "<think>4 of 36 outcomes</think>\\boxed{\\frac{4}{36}}",  # unsimplified: equal
}


def model_reply(body) -> str:
    question = last_text(body)
    for key, reply in SOLUTIONS.items():
        if key in question:
            return reply
    return "\\boxed{0}"


def test_vf_scripted_evaled_server(tmp_path, vf_eval_in_process):
    args = {"source": "sample", "math_verify_workers": 1}
    results, meta = scripted_eval(
        vf_eval_in_process, tmp_path, "i3-math", model_reply, "-n 4 -r 2", args
    )
    assert meta["status"] == "complete" and meta["num_rollouts"] == 8
    by_example = {}
    for r in results:
        assert r["error"] is None and r["task"] == "i3-math"
        by_example.setdefault(r["example_id"], []).append(r["reward"])
    assert by_example == {0: [1.0, 1.0], 1: [1.0, 1.0], 2: [0.0, 0.0], 3: [1.0, 1.0]}
    for r in results:
        assert r["metrics"]["correct_answer"] == r["metrics"]["math_verify_score"] == r["reward"]
