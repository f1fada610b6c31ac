"""The exact checking layer around math-verify (`verifiers.utils.exact_answers`): how answers
are read, the rules that override math-verify, the tolerance, and its time bound.

The full grading table (``data/grading_table.jsonl``) is graded through i3-math and
i3-science in their own tests; here vf.MathRubric itself grades it in-process.
"""

import asyncio
import json
import time
from pathlib import Path

import pytest

from verifiers.rubrics.math_rubric import MathRubric, grade_math_answer
from verifiers.utils.answer_reading import (
    normalize_latex,
    read_answer,
    read_shape,
    trig_in_degrees,
)
from verifiers.utils.exact_answers import ExactChecker, LayerTimeout, percent_question

TABLE = [json.loads(x) for x in (Path(__file__).parent / "data/grading_table.jsonl").open()]


def test_table_is_broad_and_confirmed():
    kinds = {r["kind"] for r in TABLE}
    assert len(TABLE) >= 300 and len(kinds) >= 19
    assert all(r["confirmed_by"] in ("sympy", "hand") and r["proof"] for r in TABLE)
    assert all(r["verdict"] in (0, 1) and r["math_verify"] in (0, 1) for r in TABLE)
    # the table is adversarial: bare math-verify is wrong on a good share of it, both ways
    mistakes = [r for r in TABLE if r["math_verify"] != r["verdict"]]
    assert {r["verdict"] for r in mistakes} == {0, 1} and len(mistakes) >= 50


@pytest.fixture(scope="module")
def rubrics():
    return {tol: MathRubric(numeric_rel_tol=tol) for tol in {r["rel_tol"] for r in TABLE}}


def test_math_rubric_agrees_with_every_row(rubrics):
    """In-process, with the arguments the rubric sends to its pool."""
    wrong = []
    for row in TABLE:
        prompt = [{"role": "user", "content": row["question"]}]
        completion = [{"role": "assistant", "content": row["response"]}]
        args = rubrics[row["rel_tol"]].grading_args(completion, row["gold"], prompt)
        got = 0 if args is None else int(grade_math_answer(*args)[0])
        if got != row["verdict"]:
            wrong.append((row["id"], row["gold"], row["response"], got))
    assert wrong == []


@pytest.mark.parametrize(
    ("text", "normal"),
    [
        ("6.02e23", "6.02\\times10^{23}"),
        ("1.5E-3", "1.5\\times10^{-3}"),
        ("45°", "45^\\circ"),
        ("45^{\\circ}", "45^\\circ"),
        ("0.\\overline{36}", "\\frac{4}{11}"),
        ("0.1\\overline{6}", "\\frac{1}{6}"),
        ("2\\frac{1}{3}", "\\frac{7}{3}"),
        ("1\\,000\\,000", "1000000"),
        ("$\\frac{1}{2}$", "\\frac{1}{2}"),
        ("\\$5", "\\$5"),  # dollars stay dollars
        ("2e", "2e"),  # 2·e, not scientific notation
        ("\\left(1,2\\right)", "(1,2)"),
    ],
)
def test_normalize_latex(text, normal):
    assert normalize_latex(text) == normal


@pytest.mark.parametrize(
    ("text", "kind", "items"),
    [
        ("\\{1,2\\}", "set", ("1", "2")),
        ("(1,2)", "bracket", ("1", "2")),
        ("[0,1)", "bracket", ("0", "1")),
        ("1, 2", "list", ("1", "2")),
        ("1,000", "scalar", ()),  # thousands, not a list
        ("44.2\\,\\text{m}", "scalar", ()),  # a thin space, not a comma
        ("(1,2)\\cup(3,4)", "scalar", ()),  # a union, not a list
        ("\\begin{pmatrix}1&2\\end{pmatrix}", "scalar", ()),
        ("\\{(1,2),(3,4)\\}", "set", ("(1,2)", "(3,4)")),
    ],
)
def test_read_shape(text, kind, items):
    shape = read_shape(text)
    assert shape.kind == kind and (not items or shape.items == items)


def test_read_answer_marks_what_math_verify_drops():
    r = read_answer(normalize_latex("25\\%"))
    assert (r.percent, r.literal, r.integer_literal) == (True, 25, True)
    r = read_answer(normalize_latex("6.02e23"))
    assert r.decimal and r.literal == 602 * 10**21 and not r.integer_literal
    assert read_answer("5\\text{ centimeters}").unit == "cm"
    assert read_answer("12\\text{ cm}^2").unit == "cm^2"
    assert read_answer("\\$12.50").unit == "dollar"
    assert read_answer("30^\\circ").degree and read_answer("30 \\text{ degrees}").degree
    assert read_answer("3.5 m/s^2").unit == "m/s^2"
    assert not read_answer("5x").marked and read_answer("5x").literal is None  # a variable
    assert percent_question("What percent passed?") and not percent_question("How many?")


def test_degrees_in_a_trigonometric_function_are_its_arguments():
    """Issue 27: `\\sin 60^\\circ` was read as the angle `\\sin 60` in degrees, and graded as
    sin(60 radians); the sign belongs to the function's argument."""
    for text in ("\\sin 60^\\circ", "2\\cos(80°)", "\\tan^2 30^{\\circ}", "\\sec 45\\degree"):
        normal = normalize_latex(text)
        assert trig_in_degrees(normal), text
        assert not read_answer(normal).degree, text
    for text in ("30^\\circ", "\\arcsin\\frac12", "\\sinh 2", "\\sin 60", "\\frac{\\pi}{6}"):
        assert not trig_in_degrees(normalize_latex(text)), text
    assert read_answer("30^\\circ").degree  # a whole answer in degrees stays one


@pytest.mark.parametrize(
    ("gold", "response", "score"),
    [
        ("\\frac{\\sqrt{3}}{2}", "\\sin(60^\\circ)", 1.0),
        ("\\cos 20^\\circ", "\\sin 70^\\circ", 1.0),
        ("-\\frac{1}{2}", "\\cos 120^\\circ", 1.0),
        ("\\frac{\\sqrt{2}}{2}", "\\sin 45^\\circ + \\sin 0^\\circ", 1.0),
        ("\\frac{\\pi}{6}", "\\arcsin \\frac{1}{2}", 1.0),
        ("2\\sin 10^\\circ", "2\\sin 10^\\circ", 1.0),
        ("\\cos 20^\\circ", "\\sin 20^\\circ", 0.0),
        ("\\frac{\\sqrt{3}}{2}", "\\sin 120", 0.0),
        ("1", "\\tan 45", 0.0),  # radians
        ("60^\\circ", "\\sin 60^\\circ", 0.0),  # a value is not the angle
    ],
)
def test_trigonometry_in_degrees_grades_as_degrees(gold, response, score):
    assert grade_math_answer(gold, response, 10) == (score, False)


def checker(**kw) -> ExactChecker:
    def parse(text):
        from math_verify import parse as mv_parse

        return mv_parse("\\boxed{" + text + "}")

    def never(g, r):
        raise AssertionError("math-verify should not be needed")

    return ExactChecker(parse, kw.pop("verify", never), **kw)


def test_tolerance_is_what_the_environment_states():
    exact, loose = checker(), checker(rel_tol=0.01)
    assert exact.verdict("\\frac{\\pi}{2}", "1.5707963") is False  # never 6-place rounding
    assert loose.verdict("\\frac{\\pi}{2}", "1.5707963") is True
    assert loose.verdict("\\frac{\\pi}{2}", "1.6") is False  # 1.9 % off
    assert loose.verdict("250", "250.5") is False  # an integer gold is exact even so
    assert exact.verdict("\\frac{1}{2}", "0.5") is True  # exactly equal
    assert exact.verdict("3", "3.0") is True


def test_no_rule_leaves_math_verify_its_verdict():
    c = checker()
    assert c.verdict("x^2+2x+1", "(x+1)^2") is None
    assert c.verdict("2, 3", "3, 2") is None
    assert c.verdict("[0,1)", "(0,1]") is None


def test_layer_time_bound_falls_back_to_math_verify():
    c = checker(time_limit=0.001, verify=lambda g, r: False)
    with pytest.raises(LayerTimeout):
        c.verdict("(0,\\infty)", "x^{31}-3x^{17}+x^5-7>0")  # a degree-31 inequality


PATHOLOGICAL = [
    "10^{10^{10}}",
    "\\sqrt{" * 200 + "2" + "}" * 200,
    "(" * 100 + "0.5" + "+0.1)" * 100,
    "0.3333333+10^{10^{10}}",
    "x^{31}-3x^{17}+x^5-7>0",
]


async def test_pathological_answers_stop_at_the_timeout():
    """Through the rubric's pool: each ends by the hard timeout (alarm or kill), scoring 0."""
    rubric = MathRubric(max_workers=2, timeout_seconds=1)
    try:

        async def one(answer: str) -> tuple[float, float]:
            state = {"completion": [{"role": "assistant", "content": f"\\boxed{{{answer}}}"}]}
            t = time.perf_counter()
            score = await rubric.correct_answer(state["completion"], "(0,\\infty)", state)
            return score, time.perf_counter() - t

        results = await asyncio.gather(*(one(a) for a in PATHOLOGICAL))
    finally:
        await rubric.teardown()
    assert [s for s, _ in results] == [0.0] * len(PATHOLOGICAL)
    # the pool's SIGKILL deadline (4 x 1 s + 1 s) bounds each, plus queueing behind one other
    assert all(elapsed < 2 * rubric.hard_timeout_seconds + 5 for _, elapsed in results)
