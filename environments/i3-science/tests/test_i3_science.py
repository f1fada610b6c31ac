"""i3-science: grading tables (choices, quantities with units, text, formulas), think tags, the
judge fallback, the difficulty filter, bad rows, and vf-eval runs against scripted servers."""

import asyncio
import functools
import json

import i3_science
import pytest
from i3_science import check_answer, load_environment, parse_verdict
from i3_science.answers import choice_letter

import verifiers as vf
from verifiers.testing import (
    ScriptedServer,
    assert_stuck_grading_does_not_stall,
    environment_fixture,
    judged_environment,
    score_completion,
    verdict_judge,
)
from verifiers.testing.responders import last_text

CHOICES = "Which one?\n\nA. iron\nB. neon\nC. argon\nD. tin"
PAREN_CHOICES = "Which one?\n(A) iron\n(B) neon\n(C) argon\n(D) tin"


score = functools.partial(score_completion, task="i3-science")


env = environment_fixture(load_environment, source="sample", math_verify_workers=2)


# -- grading table --------------------------------------------------------------------------
# (gold, boxed response, question, reward, how the gold is read)
TABLE = [
    # multiple choice: the letter decides; option text after the letter is fine
    ("B", "B", CHOICES, 1.0, "choice"),
    ("B", "(B) neon", CHOICES, 1.0, "choice"),
    ("B", "B. neon", CHOICES, 1.0, "choice"),
    ("C", "\\text{C}", PAREN_CHOICES, 1.0, "choice"),
    ("(C)", "C", PAREN_CHOICES, 1.0, "choice"),
    ("B", "C", CHOICES, 0.0, "choice"),
    ("B", "A and B", CHOICES, 0.0, "choice"),  # several letters are not one answer
    ("B", "neon", CHOICES, 1.0, "choice"),  # exactly the text of option B
    ("B", "\\text{Argon}", CHOICES, 0.0, "choice"),  # the text of another option: final
    ("B", "a noble gas", CHOICES, 0.0, "choice"),  # neither letter nor option: for the judge
    # numbers with units
    ("5\\text{ cm}", "5", "", 1.0, "quantity"),  # unit left out: the number decides
    ("5\\text{ cm}", "5\\text{ cm}", "", 1.0, "quantity"),
    ("5\\text{ cm}", "5\\text{ m}", "", 0.0, "quantity"),  # math-verify alone says equal
    ("3.5\\ \\text{m/s}^2", "3.5 m/s^2", "", 1.0, "quantity"),
    ("-273.15^\\circ C", "-273.15 ^{\\circ}C", "", 1.0, "quantity"),
    ("44.1\\text{ m}", "44.2\\,\\text{m}", "", 1.0, "quantity"),  # within 1 %
    ("44.1\\text{ m}", "45\\text{ m}", "", 0.0, "quantity"),  # 2 % off
    ("6.02\\times10^{23}", "6.022 \\times 10^{23}", "", 1.0, "quantity"),
    ("6.02\\times10^{23}", "6.02e23", "", 1.0, "quantity"),
    ("6.02\\times10^{23}", "6.02\\times10^{22}", "", 0.0, "quantity"),
    ("3.14", "\\frac{22}{7}", "", 1.0, "quantity"),
    ("3", "3.0", "", 1.0, "quantity"),
    ("3", "3.02", "", 0.0, "quantity"),  # integers are exact
    ("1000", "1{,}000", "", 1.0, "quantity"),
    ("123456789012345678", "123456789012345679", "", 0.0, "quantity"),
    ("432\\text{ kJ}", "4.32\\times10^{5}\\text{ J}", "", 0.0, "quantity"),  # judge's call
    # text
    ("NaCl", "\\mathrm{NaCl}", "", 1.0, "text"),
    ("NaCl", "ClNa", "", 0.0, "text"),  # math-verify would multiply symbols: equal
    ("photosynthesis", "Photosynthesis", "", 1.0, "text"),
    ("photosynthesis", "respiration", "", 0.0, "text"),
    # formulas (math-verify)
    ("\\frac{q}{4\\pi\\epsilon_0 r^2}", "\\frac{q}{4 \\pi \\epsilon_{0} r^{2}}", "", 1.0, "math"),
    ("\\sqrt{\\frac{2E}{m}}", "\\sqrt{2E/m}", "", 1.0, "math"),
    ("\\frac{1}{4}", "0.25", "", 1.0, "math"),
    ("2x", "2", "", 0.0, "math"),  # a variable, not a unit
    ("\\frac{1}{2}mv^2", "mv^2", "", 0.0, "math"),
]


async def test_grading_table(env):
    states = await asyncio.gather(
        *(score(env, f"So the answer is $\\boxed{{{r}}}$.", g, q) for g, r, q, *_ in TABLE)
    )
    got = [
        (g, r, s["reward"], s["answer_kind"]) for (g, r, *_), s in zip(TABLE, states, strict=True)
    ]
    assert got == [(g, r, want, kind) for g, r, _, want, kind in TABLE]
    for s in states:
        assert s["error"] is None and "math_verify_timeout" not in s
        assert s["metrics"] == {"correct_answer": s["reward"], "rule_score": s["reward"]}


def test_choice_needs_listed_options():
    # "C" alone is a letter only when the question lists lettered options
    assert check_answer("C", "(C) argon", CHOICES, 5, 0.01) == (1.0, False, "choice", True)
    assert choice_letter("C", "Which element has the symbol C?") is None
    assert choice_letter("C", "Is it vitamin C. or D?") is None  # one label is not a list
    assert choice_letter("(B)", PAREN_CHOICES) == "B"


COMPLETIONS = [
    ("The acceleration is 3.5 m/s^2.", 0.0),  # right value, no box
    ("<think>maybe \\boxed{3}</think>\\boxed{3.5\\text{ m/s}^2}", 1.0),
    ("<think>it is \\boxed{3.5}</think>Done.", 0.0),
    ("<think>it is \\boxed{3.5} and then the tokens ran out", 0.0),
    ("F = ma gives \\boxed{2}</think>So \\boxed{3.5}", 1.0),  # template-injected <think>
    ("\\boxed{}", 0.0),
]


async def test_extraction_and_think_tags(env):
    states = await asyncio.gather(
        *(score(env, text, "3.5\\ \\text{m/s}^2") for text, _ in COMPLETIONS)
    )
    assert [(t, s["reward"]) for (t, _), s in zip(COMPLETIONS, states, strict=True)] == COMPLETIONS


async def test_answer_length_cap(env):
    at_cap, over_cap = "ab" * 250, "ab" * 250 + "c"  # 500 and 501 characters
    short, long = await asyncio.gather(
        score(env, f"\\boxed{{{at_cap}}}", at_cap), score(env, f"\\boxed{{{over_cap}}}", over_cap)
    )
    assert (short["reward"], long["reward"]) == (1.0, 0.0)
    assert "answer_kind" not in long  # never graded


async def test_pathological_answer_times_out_without_stalling_others(env):
    others = [
        (env, "\\boxed{20\\text{ m/s}}", "20\\text{ m/s}", ""),
        (env, "\\boxed{B}", "B", CHOICES),
        (env, "\\boxed{NaCl}", "NaCl", ""),
        (env, "\\boxed{\\frac{1}{4}}", "0.25", ""),
    ]
    stuck = (env, "\\boxed{10^{10^{10}}}", "x+1", "")
    took = await assert_stuck_grading_does_not_stall(score, stuck, others)
    assert took < env.rubric.math.hard_timeout_seconds + 10.0  # killed at the latest


# -- the judge fallback ------------------------------------------------------------------------
JUDGE_VERDICTS = {  # the scripted judge's reply by candidate answer
    "4.32\\times10^{5}\\text{ J}": "432 kJ is 432000 J.\nFinal Judgment: \\boxed{A}",
    "4.32\\text{ J}": "no, the factor 1000 is missing ... yes, the digits match",
    "the neon one": "The candidate means option B.\nFinal Judgment: \\boxed{A}",
    "ClNa": "Final Judgment: \\boxed{A}\nHmm, though ClNa is not a standard formula.",
}
JUDGE_OTHERWISE = "Final Judgment: \\boxed{B}"


@pytest.fixture(scope="module")
def judged():
    with judged_environment(load_environment, JUDGE_VERDICTS, JUDGE_OTHERWISE) as judged:
        yield judged


async def test_judge_decides_what_the_rules_cannot(judged):
    judge_env, judge_server = judged
    before = len(judge_server.requests)
    cases = [
        # (response, gold, question, reward, judge_score, judge asked)
        ("\\boxed{432\\text{ kJ}}", "432\\text{ kJ}", "", 1.0, 0.0, False),
        ("\\boxed{4.32\\times10^{5}\\text{ J}}", "432\\text{ kJ}", "", 1.0, 1.0, True),
        ("\\boxed{4.32\\text{ J}}", "432\\text{ kJ}", "", 0.0, 0.0, True),  # "no ... yes"
        ("\\boxed{neon}", "B", CHOICES, 1.0, 0.0, False),  # option B's text: by rule
        ("\\boxed{the neon one}", "B", CHOICES, 1.0, 1.0, True),  # for the judge
        ("\\boxed{argon}", "B", CHOICES, 0.0, 0.0, False),  # another option's text: final
        ("\\boxed{C}", "B", CHOICES, 0.0, 0.0, False),  # a wrong letter is final
        ("\\boxed{ClNa}", "NaCl", "", 0.0, 0.0, True),  # box, then second thoughts
        ("The energy is 432 kJ.", "432\\text{ kJ}", "", 0.0, 0.0, False),  # no box
    ]
    states = await asyncio.gather(*(score(judge_env, r, g, q) for r, g, q, *_ in cases))
    for (text, _, _, reward, judged, asked), s in zip(cases, states, strict=True):
        assert s["error"] is None, text
        assert (s["reward"], s["metrics"]["judge_score"]) == (reward, judged), text
        assert ("judge_verdict" in s) == asked, text
    assert len(judge_server.requests) - before == sum(c[5] for c in cases)
    assert parse_verdict("no, it is wrong ... yes") is None


# -- dataset ------------------------------------------------------------------------------------
def test_sample_rows_and_prompt():
    env = load_environment(source="sample")
    assert len(env.dataset) == 16
    row = env.dataset[1]
    assert row["prompt"][-1]["content"].startswith(
        i3_science.INSTRUCTION_PROMPT + "\n\nWhich organelle"
    )
    assert json.loads(row["info"]) == {"domain": "biology", "source_row": 1, "avg_reward": 1.0}
    assert set(env.dataset["task"]) == {"i3-science"}


def test_difficulty_filter():
    env = load_environment(source="sample", min_avg_reward=0.3, max_avg_reward=0.9)
    rates = [json.loads(i)["avg_reward"] for i in env.dataset["info"]]
    assert rates and all(0.3 <= r <= 0.9 for r in rates)
    assert len(rates) == 7
    kept = load_environment(
        source="sample", min_avg_reward=0.3, max_avg_reward=0.9, keep_unrated=True
    )
    assert len(kept.dataset) == 8  # the row without a pass rate
    # the Nov-2025 pitfall: a difficulty key the dataset lacks must fail loudly, not keep
    # everything or nothing
    with pytest.raises(vf.ConfigError, match="no column 'avg@8_qwen3_4b_instruct_2507'"):
        load_environment(
            source="sample", difficulty_key="avg@8_qwen3_4b_instruct_2507", min_avg_reward=0.1
        )


def test_broken_rows_and_arguments():
    with pytest.raises(vf.ConfigError, match=r"row 1: answer is None"):
        load_environment(
            source=[{"question": "q", "answer": "1"}, {"question": "r", "answer": None}]
        )
    with pytest.raises(vf.ConfigError, match="numeric_rel_tol"):
        load_environment(source="sample", numeric_rel_tol=1.5)
    with pytest.raises(vf.ConfigError, match="lacks column"):
        load_environment(source=[{"problem": "q", "answer": "1"}])


# -- vf-eval end to end ------------------------------------------------------------------------
MODEL_REPLIES = {
    "cart of mass": "<think>a = F/m</think>\\boxed{3.5\\,\\mathrm{m/s^2}}",
    "Which organelle": "<think>powerhouse</think>\\boxed{B}",
    "moles of water": "</think>\\boxed{3\\text{ mol}}",
    "point charge q": "\\boxed{\\frac{q}{4\\pi\\varepsilon_0 r^2}}",
    "table salt": "\\boxed{\\text{NaCl}}",
    "frequency 50 Hz": "The speed is 20 m/s.",  # no box
    "noble gas": "\\boxed{(C) Argon}",
    "constant pressure": "\\boxed{600\\text{ kelvin}}",  # unit spelled out: for the judge
}


def model_reply(body) -> str:
    question = last_text(body)
    return next((r for k, r in MODEL_REPLIES.items() if k in question), "\\boxed{0}")


def test_vf_eval_with_judge(tmp_path, vf_eval_in_process):
    with (
        ScriptedServer(model_reply) as model,
        ScriptedServer(verdict_judge(JUDGE_VERDICTS, JUDGE_OTHERWISE)) as judge,
    ):
        env_args = {"source": "sample", "math_verify_workers": 1}
        env_args |= {"judge_model": "judge", "judge_base_url": judge.base_url}
        results, meta = vf_eval_in_process(
            tmp_path,
            "i3-science",
            model.base_url,
            "-n",
            8,
            "-r",
            1,
            "--env-args",
            json.dumps(env_args),
        )
        judged = [last_text(b) for b in judge.requests]
    assert meta["status"] == "complete" and meta["num_rollouts"] == 8
    rewards = {r["example_id"]: r["reward"] for r in results}
    # the judge grades "600 kelvin" B (not scripted as A), and the point-charge formula with
    # \varepsilon is a different symbol for math-verify, so it goes to the judge too
    assert rewards == {0: 1.0, 1: 1.0, 2: 1.0, 3: 0.0, 4: 1.0, 5: 0.0, 6: 1.0, 7: 0.0}
    assert len(judged) == 2
    assert all(r["error"] is None for r in results)
    assert {r["metrics"]["judge_score"] for r in results} == {0.0}
