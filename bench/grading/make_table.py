"""Build the grading table: (gold, response, verdict) rows across answer kinds, each verdict
confirmed independently of any LaTeX parser, and what bare math-verify says for each.

Every row states what the two answers *mean* as sympy objects written by hand (``values``: two
numbers; ``objects``: sets, tuples, intervals, matrices, polynomials, relations), and the
verdict is computed from those with exact arithmetic: equal after ``simplify``/``expand``, or
within the tolerance the environment states (rows with ``rel_tol``; never for an integer
gold). Rows sympy cannot speak to (words, responses without a final answer) carry a short
hand proof instead. ``math_verify`` is bare math-verify: ``verify(parse("\\boxed{gold}"),
parse(completion))`` with its default extraction.

    uv run --no-sync python bench/grading/make_table.py          # rewrite the table
    uv run --no-sync python bench/grading/make_table.py --check  # and print the agreement
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import sympy
from sympy import (
    Rational,
    symbols,
)

TABLE = Path(__file__).parents[2] / "packages/verifiers/tests/data/grading_table.jsonl"
x, y, a, b, n, t = symbols("x y a b n t", real=True)
NS: dict[str, Any] = {
    **{k: getattr(sympy, k) for k in dir(sympy) if not k.startswith("_")},
    "x": x,
    "y": y,
    "a": a,
    "b": b,
    "n": n,
    "t": t,
    "R": Rational,
}
PLAIN_INTEGER = re.compile(r"[-+]?\d+")
ROWS: list[dict[str, Any]] = []
PCT_Q = "What percent of the 40 students passed?"


def _row(kind: str, gold: str, response: str, verdict: int, how: str, proof: str, **kw) -> None:
    completion = kw.pop("completion", None) or f"So the final answer is $\\boxed{{{response}}}$."
    ROWS.append(
        {
            "id": f"{kind}-{sum(r['kind'] == kind for r in ROWS) + 1:02d}",
            "kind": kind,
            "gold": gold,
            "response": completion,
            "question": kw.pop("question", "Solve the problem."),
            "rel_tol": kw.pop("rel_tol", 0.0),
            "verdict": verdict,
            "confirmed_by": how,
            "proof": proof,
            **kw,
        }
    )


def num(kind: str, gold: str, response: str, g: str, r: str, rel_tol: float = 0.0, **kw) -> None:
    """Two numbers: ``g`` and ``r`` are what gold and response denote (sympy syntax)."""
    G, R_ = sympy.sympify(g, locals=NS), sympy.sympify(r, locals=NS)
    diff = sympy.simplify(G - R_)
    if diff == 0:
        verdict, proof = 1, f"sympy: ({g}) - ({r}) = 0"
    elif rel_tol and not PLAIN_INTEGER.fullmatch(gold.strip()):
        rel = abs(sympy.N(diff, 50)) / abs(sympy.N(G, 50))
        verdict = int(bool(rel <= rel_tol))
        proof = f"sympy: |({g}) - ({r})| / |{g}| = {sympy.N(rel, 3)} {'<=' if verdict else '>'} {rel_tol}"
    else:
        verdict, proof = 0, f"sympy: ({g}) - ({r}) = {sympy.N(diff, 4)} != 0"
        if rel_tol:
            proof += " (integer gold: exact even with a stated tolerance)"
    _row(kind, gold, response, verdict, "sympy", proof, rel_tol=rel_tol, **kw)


def obj(kind: str, gold: str, response: str, g: str, r: str, **kw) -> None:
    """Two objects (sets, tuples, intervals, matrices, expressions, relations as sets)."""
    G, R_ = eval(g, NS), eval(r, NS)  # our own literal table entries
    if isinstance(G, sympy.Expr) and isinstance(R_, sympy.Expr):
        same = sympy.expand(sympy.simplify(G - R_)) == 0
    elif isinstance(G, sympy.MatrixBase) and isinstance(R_, sympy.MatrixBase):
        same = G.shape == R_.shape and sympy.simplify(G - R_).is_zero_matrix
    else:
        same = bool(G == R_)
    proof = f"sympy: {G} {'==' if same else '!='} {R_}"
    _row(kind, gold, response, int(same), "sympy", proof, **kw)


def hand(kind: str, gold: str, response: str, verdict: int, proof: str, **kw) -> None:
    _row(kind, gold, response, verdict, "hand", proof, **kw)


# -- integers ----------------------------------------------------------------------------------
for gold, resp, g, r in [
    ("42", "42", "42", "42"),
    ("42", "+42", "42", "42"),
    ("42", "x = 42", "42", "42"),
    ("42", "41", "42", "41"),
    ("42", "43", "42", "43"),
    ("-7", "-7", "-7", "-7"),
    ("-7", "7", "-7", "7"),
    ("1000", "1{,}000", "1000", "1000"),
    ("1000", "1,000", "1000", "1000"),
    ("1000", "10^3", "1000", "10**3"),
    ("1000", "10^4", "1000", "10**4"),
    ("123456789012345678", "123456789012345679", "123456789012345678", "123456789012345679"),
    ("123456789012345678", "123456789012345678", "123456789012345678", "123456789012345678"),
    ("3", "3.0", "3", "3"),
    ("3", "3.00", "3", "3"),
    ("3", "3.0000001", "3", "R(30000001, 10000000)"),
    ("100", "99.9999999", "100", "R(999999999, 10000000)"),
    ("7", "7.000000001", "7", "R(7000000001, 1000000000)"),
    ("1000000", "1000000.4", "1000000", "R(10000004, 10)"),
    ("0", "0", "0", "0"),
    ("0", "-0", "0", "0"),
    ("12", "\\frac{24}{2}", "12", "24/R(2)"),
    ("12", "2^2\\cdot 3", "12", "12"),
    ("2", "2!", "2", "factorial(2)"),
    ("6", "3!", "6", "factorial(3)"),
    ("5", "\\sqrt{25}", "5", "sqrt(25)"),
    ("120", "120.", "120", "120"),
    ("1000000", "1e6", "1000000", "10**6"),
]:
    num("integer", gold, resp, g, r)
num("integer", "3", "3.0000001", "3", "R(30000001, 10000000)", rel_tol=0.01)
num("integer", "250", "250.5", "250", "R(2505, 10)", rel_tol=0.01)

# -- fractions ---------------------------------------------------------------------------------
for gold, resp, g, r in [
    ("\\frac{1}{2}", "\\dfrac12", "R(1,2)", "R(1,2)"),
    ("\\frac{1}{2}", "1/2", "R(1,2)", "R(1,2)"),
    ("\\frac{1}{2}", "0.5", "R(1,2)", "R(1,2)"),
    ("\\frac{1}{2}", "0.50", "R(1,2)", "R(1,2)"),
    ("\\frac{1}{2}", "0.5000001", "R(1,2)", "R(5000001,10000000)"),
    ("\\frac{1}{2}", "0.49999999", "R(1,2)", "R(49999999,100000000)"),
    ("\\frac{1}{9}", "\\frac{4}{36}", "R(1,9)", "R(4,36)"),
    ("\\frac{1}{3}", "0.3333333", "R(1,3)", "R(3333333,10000000)"),
    ("\\frac{1}{3}", "0.333333", "R(1,3)", "R(333333,1000000)"),
    ("\\frac{1}{3}", "0.333", "R(1,3)", "R(333,1000)"),
    ("\\frac{1}{3}", "\\frac{333333}{1000000}", "R(1,3)", "R(333333,1000000)"),
    ("\\frac{2}{7}", "0.2857143", "R(2,7)", "R(2857143,10000000)"),
    ("\\frac{2}{7}", "\\frac{4}{14}", "R(2,7)", "R(4,14)"),
    ("\\frac{1}{7}", "0.142857", "R(1,7)", "R(142857,1000000)"),
    ("\\frac{3}{8}", "0.375", "R(3,8)", "R(3,8)"),
    ("\\frac{3}{8}", "0.38", "R(3,8)", "R(38,100)"),
    ("-\\frac{1}{2}", "\\frac{-1}{2}", "R(-1,2)", "R(-1,2)"),
    ("-\\frac{1}{2}", "-0.5", "R(-1,2)", "R(-1,2)"),
    ("-\\frac{1}{2}", "\\frac{1}{2}", "R(-1,2)", "R(1,2)"),
    ("\\frac{3}{4}", "\\tfrac34", "R(3,4)", "R(3,4)"),
    ("\\frac{3}{4}", "\\frac{4}{3}", "R(3,4)", "R(4,3)"),
    ("\\frac{7}{3}", "2\\frac{1}{3}", "R(7,3)", "R(7,3)"),
    ("\\frac{5}{6}", "0.8333333", "R(5,6)", "R(8333333,10000000)"),
    ("\\frac{2}{3}", "0.6666667", "R(2,3)", "R(6666667,10000000)"),
    ("\\frac{2}{3}", "0.67", "R(2,3)", "R(67,100)"),
    ("\\frac{4}{11}", "0.\\overline{36}", "R(4,11)", "R(36,99)"),
    ("\\frac{1}{7}", "0.\\overline{142857}", "R(1,7)", "R(142857,999999)"),
    ("\\frac{1}{6}", "0.1\\overline{6}", "R(1,6)", "R(1,10) + R(6,90)"),
    ("\\frac{1}{6}", "0.1\\overline{7}", "R(1,6)", "R(1,10) + R(7,90)"),
    ("\\frac{1}{3}", "x = 0.3333333", "R(1,3)", "R(3333333,10000000)"),
    ("\\frac{1}{2}", "x = 0.5", "R(1,2)", "R(1,2)"),
    ("\\frac{1}{3}", "0.3\\overline{3}", "R(1,3)", "R(3,10) + R(3,90)"),
]:
    num("fraction", gold, resp, g, r)
num("fraction", "\\frac{1}{3}", "0.3333333", "R(1,3)", "R(3333333,10000000)", rel_tol=0.01)
num("fraction", "\\frac{2}{3}", "0.67", "R(2,3)", "R(67,100)", rel_tol=0.01)
num("fraction", "\\frac{2}{3}", "0.6", "R(2,3)", "R(6,10)", rel_tol=0.01)

# -- decimals ----------------------------------------------------------------------------------
for gold, resp, g, r in [
    ("0.5", "\\frac{1}{2}", "R(1,2)", "R(1,2)"),
    ("0.25", "\\frac14", "R(1,4)", "R(1,4)"),
    ("2.5", "2.50", "R(5,2)", "R(5,2)"),
    ("2.5", "\\frac{5}{2}", "R(5,2)", "R(5,2)"),
    ("2.5", "2.6", "R(5,2)", "R(26,10)"),
    ("0.1", "0.10000001", "R(1,10)", "R(10000001,100000000)"),
    ("0.1", "\\frac{1}{10}", "R(1,10)", "R(1,10)"),
    ("1.5", "\\frac{3}{2}", "R(3,2)", "R(3,2)"),
    ("0.142857", "\\frac{1}{7}", "R(142857,1000000)", "R(1,7)"),
    ("0.333", "\\frac{1}{3}", "R(333,1000)", "R(1,3)"),
    ("3.14", "\\pi", "R(314,100)", "pi"),
    ("3.14", "3.14", "R(314,100)", "R(314,100)"),
    ("3.14", "3.1416", "R(314,100)", "R(31416,10000)"),
    ("0.125", ".125", "R(1,8)", "R(1,8)"),
    ("-0.75", "-\\frac{3}{4}", "R(-3,4)", "R(-3,4)"),
    ("12.5", "12\\frac{1}{2}", "R(25,2)", "R(25,2)"),
    ("0.0015", "1.5\\times 10^{-3}", "R(15,10000)", "R(15,10000)"),
    ("1.0", "1", "1", "1"),
]:
    num("decimal", gold, resp, g, r)
for gold, resp, g, r in [
    ("3.14", "\\pi", "R(314,100)", "pi"),
    ("3.14", "3.1416", "R(314,100)", "R(31416,10000)"),
    ("3.14", "3.2", "R(314,100)", "R(32,10)"),
    ("0.333", "\\frac{1}{3}", "R(333,1000)", "R(1,3)"),
    ("44.1", "44.2", "R(441,10)", "R(442,10)"),
    ("44.1", "45", "R(441,10)", "45"),
    ("2.718", "e", "R(2718,1000)", "E"),
    ("0.33", "0.333", "R(33,100)", "R(333,1000)"),
]:
    num("decimal", gold, resp, g, r, rel_tol=0.01)
# a decimal gold is not a rounding instruction: 0.5 may be exactly one half, so 0.54 is wrong
num("decimal", "0.33", "0.333", "R(33,100)", "R(333,1000)")
num("decimal", "0.5", "0.54", "R(1,2)", "R(54,100)")

# -- radicals ----------------------------------------------------------------------------------
for gold, resp, g, r in [
    ("2\\sqrt{2}", "\\sqrt{8}", "2*sqrt(2)", "sqrt(8)"),
    ("\\sqrt{2}", "\\frac{2}{\\sqrt{2}}", "sqrt(2)", "2/sqrt(2)"),
    ("\\sqrt{2}", "1.4142136", "sqrt(2)", "R(14142136,10000000)"),
    ("\\sqrt{2}", "1.414214", "sqrt(2)", "R(1414214,1000000)"),
    ("\\sqrt{2}", "1.41", "sqrt(2)", "R(141,100)"),
    ("3\\sqrt{3}", "\\sqrt{27}", "3*sqrt(3)", "sqrt(27)"),
    ("3\\sqrt{3}", "5.196152", "3*sqrt(3)", "R(5196152,1000000)"),
    ("\\frac{\\sqrt{3}}{2}", "\\frac{1}{2}\\sqrt{3}", "sqrt(3)/2", "sqrt(3)/2"),
    ("\\frac{\\sqrt{3}}{2}", "0.8660254", "sqrt(3)/2", "R(8660254,10000000)"),
    ("\\frac{\\sqrt{3}}{2}", "\\frac{\\sqrt{2}}{2}", "sqrt(3)/2", "sqrt(2)/2"),
    ("\\frac{1}{\\sqrt{2}}", "\\frac{\\sqrt{2}}{2}", "1/sqrt(2)", "sqrt(2)/2"),
    ("\\sqrt[3]{2}", "2^{1/3}", "2**R(1,3)", "2**R(1,3)"),
    ("\\sqrt[3]{2}", "1.2599210", "2**R(1,3)", "R(12599210,10000000)"),
    ("1+\\sqrt{5}", "\\sqrt{5}+1", "1+sqrt(5)", "sqrt(5)+1"),
    ("1+\\sqrt{5}", "1-\\sqrt{5}", "1+sqrt(5)", "1-sqrt(5)"),
    ("\\sqrt{2}+\\sqrt{3}", "\\sqrt{5+2\\sqrt{6}}", "sqrt(2)+sqrt(3)", "sqrt(5+2*sqrt(6))"),
    ("\\sqrt{12}", "2\\sqrt{3}", "sqrt(12)", "2*sqrt(3)"),
    ("\\sqrt{12}", "3\\sqrt{2}", "sqrt(12)", "3*sqrt(2)"),
]:
    num("radical", gold, resp, g, r)
num("radical", "\\sqrt{2}", "1.4142136", "sqrt(2)", "R(14142136,10000000)", rel_tol=0.01)
num("radical", "\\sqrt{2}", "1.41", "sqrt(2)", "R(141,100)", rel_tol=0.01)
num("radical", "\\sqrt{2}", "1.5", "sqrt(2)", "R(15,10)", rel_tol=0.01)

# -- pi and e ----------------------------------------------------------------------------------
for gold, resp, g, r in [
    ("\\frac{\\pi}{2}", "\\pi/2", "pi/2", "pi/2"),
    ("\\frac{\\pi}{2}", "1.5707963", "pi/2", "R(15707963,10000000)"),
    ("\\frac{\\pi}{2}", "1.57", "pi/2", "R(157,100)"),
    ("2\\pi", "6.2831853", "2*pi", "R(62831853,10000000)"),
    ("2\\pi", "\\pi + \\pi", "2*pi", "2*pi"),
    ("\\pi", "3.14159265358979", "pi", "R(314159265358979,10**14)"),
    ("\\pi", "3.141592653589793238", "pi", "R(3141592653589793238,10**18)"),
    ("\\pi", "\\frac{22}{7}", "pi", "R(22,7)"),
    ("e", "2.7182818", "E", "R(27182818,10000000)"),
    ("e^2", "\\exp(2)", "E**2", "exp(2)"),
    ("e^2", "e^{2}", "E**2", "E**2"),
    ("e^2", "2e", "E**2", "2*E"),
    ("\\ln 2", "0.6931472", "log(2)", "R(6931472,10000000)"),
    ("\\ln 8", "3\\ln 2", "log(8)", "3*log(2)"),
    ("4\\pi", "12.566371", "4*pi", "R(12566371,1000000)"),
    ("\\frac{\\pi}{4}", "\\frac{\\pi}{3}", "pi/4", "pi/3"),
    ("\\pi^2", "9.8696044", "pi**2", "R(98696044,10000000)"),
    ("\\frac{\\pi}{6}", "\\frac{2\\pi}{12}", "pi/6", "2*pi/12"),
    ("e^{0.5}", "\\sqrt{e}", "exp(R(1,2))", "sqrt(E)"),
    ("2.5\\pi", "\\frac{5\\pi}{2}", "R(5,2)*pi", "5*pi/2"),
    ("2.5\\pi", "7.8539816", "R(5,2)*pi", "R(78539816,10**7)"),
]:
    num("pi-e", gold, resp, g, r)
num("pi-e", "\\frac{\\pi}{2}", "1.5707963", "pi/2", "R(15707963,10000000)", rel_tol=0.01)
num("pi-e", "\\frac{\\pi}{2}", "1.57", "pi/2", "R(157,100)", rel_tol=0.01)
num("pi-e", "\\frac{\\pi}{2}", "1.6", "pi/2", "R(16,10)", rel_tol=0.01)
num("pi-e", "e", "2.72", "E", "R(272,100)", rel_tol=0.01)
num("pi-e", "2\\pi", "6.3", "2*pi", "R(63,10)", rel_tol=0.01)

# -- intervals ---------------------------------------------------------------------------------
for gold, resp, g, r in [
    ("(-\\infty, 4)", "(-\\infty,4)", "Interval.open(-oo,4)", "Interval.open(-oo,4)"),
    ("(-\\infty, 4)", "(-\\infty,4]", "Interval.open(-oo,4)", "Interval(-oo,4)"),
    ("(-\\infty, 4)", "x<4", "Interval.open(-oo,4)", "(x<4).as_set()"),
    ("(-\\infty, 4)", "x\\le 4", "Interval.open(-oo,4)", "(x<=4).as_set()"),
    ("[0,1)", "[0,1)", "Interval.Ropen(0,1)", "Interval.Ropen(0,1)"),
    ("[0,1)", "(0,1]", "Interval.Ropen(0,1)", "Interval.Lopen(0,1)"),
    ("[0,1)", "[0,1]", "Interval.Ropen(0,1)", "Interval(0,1)"),
    ("[2,5)", "2\\le x<5", "Interval.Ropen(2,5)", "And(2<=x, x<5).as_set()"),
    ("[2,5)", "2< x\\le 5", "Interval.Ropen(2,5)", "And(2<x, x<=5).as_set()"),
    ("(0,\\infty)", "x>0", "Interval.open(0,oo)", "(x>0).as_set()"),
    ("(0,\\infty)", "x\\ge 0", "Interval.open(0,oo)", "(x>=0).as_set()"),
    ("[0,\\infty)", "x\\geq 0", "Interval(0,oo)", "(x>=0).as_set()"),
    ("[1,3]", "[1, 3]", "Interval(1,3)", "Interval(1,3)"),
    ("[1,3]", "\\left[1,3\\right]", "Interval(1,3)", "Interval(1,3)"),
    ("[1,3]", "[1,4]", "Interval(1,3)", "Interval(1,4)"),
    ("(-\\infty,-1)\\cup(1,\\infty)", "(-\\infty,-1)\\cup(1,\\infty)",
     "Union(Interval.open(-oo,-1), Interval.open(1,oo))",
     "Union(Interval.open(-oo,-1), Interval.open(1,oo))"),
    ("(-\\infty,-1)\\cup(1,\\infty)", "(1,\\infty)\\cup(-\\infty,-1)",
     "Union(Interval.open(-oo,-1), Interval.open(1,oo))",
     "Union(Interval.open(1,oo), Interval.open(-oo,-1))"),
    ("(-\\infty,-1)\\cup(1,\\infty)", "(-\\infty,-1]\\cup[1,\\infty)",
     "Union(Interval.open(-oo,-1), Interval.open(1,oo))",
     "Union(Interval(-oo,-1), Interval(1,oo))"),
    ("(-2,3)", "-2<x<3", "Interval.open(-2,3)", "And(-2<x, x<3).as_set()"),
    ("(-2,3)", "(-2,3]", "Interval.open(-2,3)", "Interval.Lopen(-2,3)"),
    ("[0.5, 1]", "[0.5000001, 1]", "Interval(R(1,2),1)", "Interval(R(5000001,10**7),1)"),
    ("[0.5, 1]", "[\\frac{1}{2}, 1]", "Interval(R(1,2),1)", "Interval(R(1,2),1)"),
    ("[-1, 1]", "-1 \\le x \\le 1", "Interval(-1,1)", "And(-1<=x, x<=1).as_set()"),
]:  # fmt: skip
    obj("interval", gold, resp, g, r)

# -- inequalities ------------------------------------------------------------------------------
for gold, resp, g, r in [
    ("x<4", "x<4", "(x<4).as_set()", "(x<4).as_set()"),
    ("x<4", "4>x", "(x<4).as_set()", "(4>x).as_set()"),
    ("x<4", "(-\\infty,4)", "(x<4).as_set()", "Interval.open(-oo,4)"),
    ("x<4", "(-\\infty,4]", "(x<4).as_set()", "Interval(-oo,4)"),
    ("x\\le 4", "x<4", "(x<=4).as_set()", "(x<4).as_set()"),
    ("x\\le 4", "(-\\infty,4]", "(x<=4).as_set()", "Interval(-oo,4)"),
    ("x\\ge 2", "x\\geq 2", "(x>=2).as_set()", "(x>=2).as_set()"),
    ("x\\ge 2", "x>2", "(x>=2).as_set()", "(x>2).as_set()"),
    ("x\\ge 2", "[2,\\infty)", "(x>=2).as_set()", "Interval(2,oo)"),
    ("x > -1", "(-1,\\infty)", "(x>-1).as_set()", "Interval.open(-1,oo)"),
    ("x > -1", "x < -1", "(x>-1).as_set()", "(x<-1).as_set()"),
    ("-1 < x < 2", "(-1,2)", "And(-1<x,x<2).as_set()", "Interval.open(-1,2)"),
]:
    obj("inequality", gold, resp, g, r)

# -- sets --------------------------------------------------------------------------------------
for gold, resp, g, r in [
    ("\\{1,2\\}", "\\{2,1\\}", "FiniteSet(1,2)", "FiniteSet(2,1)"),
    ("\\{1,2\\}", "\\{1, 2\\}", "FiniteSet(1,2)", "FiniteSet(1,2)"),
    ("\\{1,2\\}", "(1,2)", "FiniteSet(1,2)", "Tuple(1,2)"),
    ("\\{1,2\\}", "[1,2]", "FiniteSet(1,2)", "Interval(1,2)"),
    ("\\{1,2\\}", "\\{1,2,3\\}", "FiniteSet(1,2)", "FiniteSet(1,2,3)"),
    ("\\{1,2\\}", "\\{1\\}", "FiniteSet(1,2)", "FiniteSet(1)"),
    ("\\{1,2,3\\}", "(1,2,3)", "FiniteSet(1,2,3)", "Tuple(1,2,3)"),
    ("\\{1,2,3\\}", "\\{3,1,2\\}", "FiniteSet(1,2,3)", "FiniteSet(3,1,2)"),
    ("\\{\\frac{1}{3}, 2\\}", "\\{0.3333333, 2\\}", "FiniteSet(R(1,3),2)", "FiniteSet(R(3333333,10**7),2)"),
    ("\\{\\frac{1}{2}, 2\\}", "\\{2, 0.5\\}", "FiniteSet(R(1,2),2)", "FiniteSet(2,R(1,2))"),
    ("\\{\\sqrt{2}, -\\sqrt{2}\\}", "\\{-\\sqrt{2}, \\sqrt{2}\\}", "FiniteSet(sqrt(2),-sqrt(2))", "FiniteSet(-sqrt(2),sqrt(2))"),
    ("\\{\\sqrt{2}, -\\sqrt{2}\\}", "\\{1.4142136, -1.4142136\\}", "FiniteSet(sqrt(2),-sqrt(2))", "FiniteSet(R(14142136,10**7),-R(14142136,10**7))"),
    ("\\{-1, 1\\}", "\\{1, -1\\}", "FiniteSet(-1,1)", "FiniteSet(1,-1)"),
    ("\\{-1, 1\\}", "(-1,1)", "FiniteSet(-1,1)", "Interval.open(-1,1)"),
    ("\\{2\\}", "2", "FiniteSet(2)", "FiniteSet(2)"),
    ("\\{(1,2),(3,4)\\}", "\\{(3,4),(1,2)\\}", "FiniteSet(Tuple(1,2),Tuple(3,4))", "FiniteSet(Tuple(3,4),Tuple(1,2))"),
    ("\\{(1,2),(3,4)\\}", "\\{(2,1),(4,3)\\}", "FiniteSet(Tuple(1,2),Tuple(3,4))", "FiniteSet(Tuple(2,1),Tuple(4,3))"),
    ("\\{0, \\pi\\}", "\\{\\pi, 0\\}", "FiniteSet(0,pi)", "FiniteSet(pi,0)"),
    ("\\{0, \\pi\\}", "\\{0, 3.1415927\\}", "FiniteSet(0,pi)", "FiniteSet(0,R(31415927,10**7))"),
    ("\\{1, 2\\}", "1, 2", "FiniteSet(1,2)", "FiniteSet(1,2)"),
]:  # fmt: skip
    obj("set", gold, resp, g, r)

# -- tuples ------------------------------------------------------------------------------------
for gold, resp, g, r in [
    ("(1,2)", "(1, 2)", "Tuple(1,2)", "Tuple(1,2)"),
    ("(1,2)", "(2,1)", "Tuple(1,2)", "Tuple(2,1)"),
    ("(1,2)", "\\{1,2\\}", "Tuple(1,2)", "FiniteSet(1,2)"),
    ("(1,2)", "\\left(1,2\\right)", "Tuple(1,2)", "Tuple(1,2)"),
    ("(1,2,3)", "(1,2,3)", "Tuple(1,2,3)", "Tuple(1,2,3)"),
    ("(1,2,3)", "(3,2,1)", "Tuple(1,2,3)", "Tuple(3,2,1)"),
    ("(1,2,3)", "\\{1,2,3\\}", "Tuple(1,2,3)", "FiniteSet(1,2,3)"),
    ("(1,2,3)", "\\{3,2,1\\}", "Tuple(1,2,3)", "FiniteSet(3,2,1)"),
    ("(1,2,3)", "1,2,3", "Tuple(1,2,3)", "Tuple(1,2,3)"),
    ("(1,2,3)", "3,2,1", "Tuple(1,2,3)", "Tuple(3,2,1)"),
    ("(3,4)", "x=3, y=4", "Tuple(3,4)", "Tuple(3,4)"),
    ("(\\frac{1}{2}, \\frac{1}{3})", "(0.5, \\frac{1}{3})", "Tuple(R(1,2),R(1,3))", "Tuple(R(1,2),R(1,3))"),
    ("(\\frac{1}{2}, \\frac{1}{3})", "(0.5, 0.3333333)", "Tuple(R(1,2),R(1,3))", "Tuple(R(1,2),R(3333333,10**7))"),
    ("(\\frac{1}{2}, \\frac{1}{3})", "(\\frac{1}{3}, \\frac{1}{2})", "Tuple(R(1,2),R(1,3))", "Tuple(R(1,3),R(1,2))"),
    ("(-1, 0, 2)", "(-1,0,2)", "Tuple(-1,0,2)", "Tuple(-1,0,2)"),
    ("(-1, 0, 2)", "(-1,0,-2)", "Tuple(-1,0,2)", "Tuple(-1,0,-2)"),
    ("(2, -3)", "(2,-3)", "Tuple(2,-3)", "Tuple(2,-3)"),
    ("(2, -3)", "(-3,2)", "Tuple(2,-3)", "Tuple(-3,2)"),
    ("(1,2,3,4)", "\\{1,2,3,4\\}", "Tuple(1,2,3,4)", "FiniteSet(1,2,3,4)"),
    ("(0.5, 1.5)", "(\\frac12, \\frac32)", "Tuple(R(1,2),R(3,2))", "Tuple(R(1,2),R(3,2))"),
    ("a=2, b=3", "(2,3)", "Tuple(2,3)", "Tuple(2,3)"),
    ("a=2, b=3", "(3,2)", "Tuple(2,3)", "Tuple(3,2)"),
    ("y=4, x=3", "(3,4)", "Tuple(3,4)", "Tuple(3,4)"),
]:  # fmt: skip
    obj("tuple", gold, resp, g, r)

# -- matrices ----------------------------------------------------------------------------------
M = "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}"
for gold, resp, g, r in [
    (M, "\\begin{bmatrix}1&2\\\\3&4\\end{bmatrix}", "Matrix([[1,2],[3,4]])", "Matrix([[1,2],[3,4]])"),
    (M, "\\begin{pmatrix}1&3\\\\2&4\\end{pmatrix}", "Matrix([[1,2],[3,4]])", "Matrix([[1,3],[2,4]])"),
    (M, "\\begin{pmatrix}1&2\\\\3&5\\end{pmatrix}", "Matrix([[1,2],[3,4]])", "Matrix([[1,2],[3,5]])"),
    (M, "\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}", "Matrix([[1,2],[3,4]])", "Matrix([[1,2],[3,4]])"),
    ("\\begin{pmatrix}\\frac12&0\\\\0&1\\end{pmatrix}", "\\begin{pmatrix}0.5&0\\\\0&1\\end{pmatrix}",
     "Matrix([[R(1,2),0],[0,1]])", "Matrix([[R(1,2),0],[0,1]])"),
    ("\\begin{pmatrix}2&0\\\\0&2\\end{pmatrix}", "\\begin{pmatrix}2&0\\\\0&-2\\end{pmatrix}",
     "Matrix([[2,0],[0,2]])", "Matrix([[2,0],[0,-2]])"),
    ("\\begin{pmatrix}1\\\\2\\end{pmatrix}", "\\begin{pmatrix}1\\\\2\\end{pmatrix}", "Matrix([1,2])", "Matrix([1,2])"),
    ("\\begin{pmatrix}1\\\\2\\end{pmatrix}", "\\begin{pmatrix}2\\\\1\\end{pmatrix}", "Matrix([1,2])", "Matrix([2,1])"),
    ("\\begin{pmatrix}\\sqrt{2}&1\\\\0&1\\end{pmatrix}", "\\begin{pmatrix}\\sqrt{2}&1\\\\0&1\\end{pmatrix}",
     "Matrix([[sqrt(2),1],[0,1]])", "Matrix([[sqrt(2),1],[0,1]])"),
    ("\\begin{pmatrix}1&0\\\\0&1\\end{pmatrix}", "\\begin{pmatrix}0&1\\\\1&0\\end{pmatrix}",
     "Matrix([[1,0],[0,1]])", "Matrix([[0,1],[1,0]])"),
]:  # fmt: skip
    obj("matrix", gold, resp, g, r)

# -- polynomials -------------------------------------------------------------------------------
for gold, resp, g, r in [
    ("x^2+2x+1", "(x+1)^2", "x**2+2*x+1", "(x+1)**2"),
    ("x^2+2x+1", "(x-1)^2", "x**2+2*x+1", "(x-1)**2"),
    ("x^2-1", "(x-1)(x+1)", "x**2-1", "(x-1)*(x+1)"),
    ("x^2-1", "(x-1)(x-1)", "x**2-1", "(x-1)**2"),
    ("4x^2 - 12x + 9", "(2x-3)^2", "4*x**2-12*x+9", "(2*x-3)**2"),
    ("2x+3", "3+2x", "2*x+3", "3+2*x"),
    ("2x+3", "2x-3", "2*x+3", "2*x-3"),
    ("x^3-x", "x(x-1)(x+1)", "x**3-x", "x*(x-1)*(x+1)"),
    ("x^3-x", "x(x^2+1)", "x**3-x", "x*(x**2+1)"),
    ("x^2+1", "x^2+1.0000001", "x**2+1", "x**2+R(10000001,10**7)"),
    ("\\frac{x}{2}+1", "0.5x+1", "x/2+1", "R(1,2)*x+1"),
    ("a^2-b^2", "(a-b)(a+b)", "a**2-b**2", "(a-b)*(a+b)"),
    ("a^2-b^2", "(a-b)^2", "a**2-b**2", "(a-b)**2"),
    ("3n+1", "1+3n", "3*n+1", "1+3*n"),
    ("n(n+1)/2", "\\frac{n^2+n}{2}", "n*(n+1)/2", "(n**2+n)/2"),
    ("n(n+1)/2", "\\frac{n^2-n}{2}", "n*(n+1)/2", "(n**2-n)/2"),
    ("y=2x+1", "y=1+2x", "2*x+1", "1+2*x"),
    ("y=2x+1", "2x+1", "2*x+1", "2*x+1"),
]:
    obj("polynomial", gold, resp, g, r)

# -- multiple answers --------------------------------------------------------------------------
for gold, resp, g, r in [
    ("2, 3", "3, 2", "FiniteSet(2,3)", "FiniteSet(3,2)"),
    ("2, 3", "2,3", "FiniteSet(2,3)", "FiniteSet(2,3)"),
    ("2, 3", "2", "FiniteSet(2,3)", "FiniteSet(2)"),
    ("2", "2, 3", "FiniteSet(2)", "FiniteSet(2,3)"),
    ("2, 3", "x=2 \\text{ or } x=3", "FiniteSet(2,3)", "FiniteSet(2,3)"),
    ("2, 3", "2 \\text{ and } 3", "FiniteSet(2,3)", "FiniteSet(2,3)"),
    ("2, 3", "\\{2,3\\}", "FiniteSet(2,3)", "FiniteSet(2,3)"),
    ("2, 3", "(3,2)", "FiniteSet(2,3)", "Tuple(3,2)"),
    ("-1, 4", "4, -1", "FiniteSet(-1,4)", "FiniteSet(4,-1)"),
    ("-1, 4", "1, 4", "FiniteSet(-1,4)", "FiniteSet(1,4)"),
    ("\\frac{1}{2}, 2", "2, 0.5", "FiniteSet(R(1,2),2)", "FiniteSet(2,R(1,2))"),
    ("\\frac{1}{3}, 2", "2, 0.3333333", "FiniteSet(R(1,3),2)", "FiniteSet(2,R(3333333,10**7))"),
    ("1, 2, 3", "3, 2, 1", "FiniteSet(1,2,3)", "FiniteSet(3,2,1)"),
    ("1, 2, 3", "1, 2", "FiniteSet(1,2,3)", "FiniteSet(1,2)"),
]:
    obj("multiple", gold, resp, g, r)

hand(
    "multiple",
    "2, 3",
    "(2,3)",
    1,
    "hand: a bare list 2, 3 may name a point; (2,3) gives the same values in the same order",
)

# -- percentages -------------------------------------------------------------------------------
# what each answer means in context: a percentage is its number / 100, and a bare number
# answering "what percent" is the percentage it names
for gold, resp, g, r, q in [
    ("25\\%", "25\\%", "R(25,100)", "R(25,100)", PCT_Q),
    ("25\\%", "25", "R(25,100)", "R(25,100)", PCT_Q),
    ("25\\%", "0.25", "R(25,100)", "R(25,100)", PCT_Q),
    ("25\\%", "\\frac{1}{4}", "R(25,100)", "R(1,4)", PCT_Q),
    ("25\\%", "2.5\\%", "R(25,100)", "R(25,1000)", PCT_Q),
    ("25\\%", "26\\%", "R(25,100)", "R(26,100)", PCT_Q),
    ("50\\%", "0.5\\%", "R(50,100)", "R(5,1000)", PCT_Q),
    ("12.5\\%", "12.5\\%", "R(125,1000)", "R(125,1000)", PCT_Q),
    ("12.5\\%", "\\frac{1}{8}", "R(125,1000)", "R(1,8)", PCT_Q),
    ("25", "25\\%", "25", "R(25,100)", "How many students passed?"),
    ("40", "40\\%", "40", "R(40,100)", "How many marbles are red?"),
    ("25", "25\\%", "R(25,100)", "R(25,100)", PCT_Q),
    ("0.25", "25\\%", "R(1,4)", "R(25,100)", "What fraction of the students passed?"),
    ("1", "100\\%", "1", "R(100,100)", "What is the probability of rain?"),
    ("12", "12.0\\%", "12", "R(12,100)", "How many apples are left?"),
    ("30\\%", "30 \\text{ percent}", "R(30,100)", "R(30,100)", PCT_Q),
]:
    num("percent", gold, resp, g, r, question=q)

# -- units (SI values; the question fixes nothing else) -----------------------------------------
for gold, resp, g, r in [
    ("5\\text{ cm}", "5\\text{ cm}", "R(5,100)", "R(5,100)"),
    ("5\\text{ cm}", "5", "R(5,100)", "R(5,100)"),
    ("5\\text{ cm}", "5\\text{ m}", "R(5,100)", "5"),
    ("5\\text{ cm}", "50\\text{ mm}", "R(5,100)", "R(50,1000)"),
    ("5\\text{ cm}", "5\\text{ centimeters}", "R(5,100)", "R(5,100)"),
    ("1\\text{ m}", "100\\text{ cm}", "1", "1"),
    ("1\\text{ km}", "1000\\text{ m}", "1000", "1000"),
    ("1\\text{ km}", "100\\text{ m}", "1000", "100"),
    ("2\\text{ hours}", "120\\text{ minutes}", "7200", "7200"),
    ("2\\text{ hours}", "2\\text{ minutes}", "7200", "120"),
    ("\\$5", "5\\text{ dollars}", "5", "5"),
    ("\\$5", "5\\text{ cents}", "5", "R(5,100)"),
    ("\\$12", "12", "12", "12"),
    ("\\$12.50", "\\$12.5", "R(25,2)", "R(25,2)"),
    ("\\$1.50", "150\\text{ cents}", "R(3,2)", "R(150,100)"),
    ("5\\text{ cm}", "0.05\\text{ m}", "R(5,100)", "R(5,100)"),
    ("3\\text{ kg}", "3000\\text{ g}", "3", "3"),
    ("3\\text{ kg}", "3\\text{ g}", "3", "R(3,1000)"),
    ("12\\text{ cm}^2", "12\\text{ cm}^2", "R(12,10000)", "R(12,10000)"),
    ("12\\text{ cm}^2", "12\\text{ cm}", "R(12,10000)", "R(12,100)"),
    ("3.5\\ \\text{m/s}^2", "3.5 m/s^2", "R(35,10)", "R(35,10)"),
    ("60\\text{ km/h}", "60 km/h", "60", "60"),
]:
    num("unit", gold, resp, g, r)

# -- degrees -----------------------------------------------------------------------------------
for gold, resp, g, r in [
    ("30^\\circ", "30^\\circ", "pi/6", "pi/6"),
    ("30^\\circ", "30", "pi/6", "pi/6"),
    ("30^\\circ", "\\frac{\\pi}{6}", "pi/6", "pi/6"),
    ("30^\\circ", "30°", "pi/6", "pi/6"),
    ("30^\\circ", "30 \\text{ degrees}", "pi/6", "pi/6"),
    ("30^\\circ", "60^\\circ", "pi/6", "pi/3"),
    ("\\frac{\\pi}{6}", "30^\\circ", "pi/6", "pi/6"),
    ("\\frac{\\pi}{2}", "90^{\\circ}", "pi/2", "pi/2"),
    ("\\frac{\\pi}{2}", "45^{\\circ}", "pi/2", "pi/4"),
    ("90^\\circ", "\\frac{\\pi}{2}", "pi/2", "pi/2"),
    ("45^{\\circ}", "45°", "pi/4", "pi/4"),
    ("45^{\\circ}", "\\frac{\\pi}{3}", "pi/4", "pi/3"),
    ("120^\\circ", "\\frac{2\\pi}{3}", "2*pi/3", "2*pi/3"),
    ("120^\\circ", "\\frac{3\\pi}{2}", "2*pi/3", "3*pi/2"),
    ("\\frac{\\pi}{3}", "60^\\circ", "pi/3", "pi/3"),
    ("180^\\circ", "\\pi", "pi", "pi"),
    ("\\pi", "180^\\circ", "pi", "pi"),
    # a trigonometric function's argument in degrees (issue 27: read as radians before)
    ("\\frac{\\sqrt{3}}{2}", "\\sin 60^\\circ", "sqrt(3)/2", "sin(pi/3)"),
    ("\\frac{1}{2}", "\\cos 60^{\\circ}", "R(1,2)", "cos(pi/3)"),
    ("\\sqrt{3}", "\\tan(60°)", "sqrt(3)", "tan(pi/3)"),
    ("\\sin 60^\\circ", "\\frac{\\sqrt{3}}{2}", "sin(pi/3)", "sqrt(3)/2"),
    ("2\\sin 10^\\circ", "2\\cos 80^\\circ", "2*sin(pi/18)", "2*cos(4*pi/9)"),
    ("\\frac{1}{2}", "\\sin^2 45^\\circ", "R(1,2)", "sin(pi/4)**2"),
    ("0.5", "\\sin 30^\\circ", "R(1,2)", "sin(pi/6)"),
    ("30^\\circ", "\\arcsin\\frac{1}{2}", "pi/6", "asin(R(1,2))"),
    ("\\frac{\\sqrt{3}}{2}", "\\sin 60", "sqrt(3)/2", "sin(60)"),
    ("\\frac{1}{2}", "\\sin 60^\\circ", "R(1,2)", "sin(pi/3)"),
    ("\\frac{\\sqrt{3}}{2}", "\\cos 60^\\circ", "sqrt(3)/2", "cos(pi/3)"),
    ("30^\\circ", "\\sin 30^\\circ", "pi/6", "sin(pi/6)"),
    ("30^\\circ", "\\arccos\\frac{1}{2}", "pi/6", "acos(R(1,2))"),
]:
    num("degree", gold, resp, g, r)

# -- scientific notation -----------------------------------------------------------------------
for gold, resp, g, r in [
    ("6.02\\times10^{23}", "6.02e23", "R(602,100)*10**23", "R(602,100)*10**23"),
    ("6.02\\times10^{23}", "6.02 \\cdot 10^{23}", "R(602,100)*10**23", "R(602,100)*10**23"),
    ("6.02\\times10^{23}", "602000000000000000000000", "R(602,100)*10**23", "602000000000000000000000"),
    ("6.02\\times10^{23}", "6.03\\times10^{23}", "R(602,100)*10**23", "R(603,100)*10**23"),
    ("6.02\\times10^{23}", "6.022\\times10^{23}", "R(602,100)*10**23", "R(6022,1000)*10**23"),
    ("6.02\\times10^{23}", "6.02\\times10^{22}", "R(602,100)*10**23", "R(602,100)*10**22"),
    ("1.5\\times10^{-3}", "0.0015", "R(15,10)/10**3", "R(15,10000)"),
    ("1.5\\times10^{-3}", "1.5E-3", "R(15,10)/10**3", "R(15,10)/10**3"),
    ("1.5\\times10^{-3}", "1.5\\times10^{3}", "R(15,10)/10**3", "R(15,10)*10**3"),
    ("0.0015", "1.5e-3", "R(15,10000)", "R(15,10)/10**3"),
    ("1.2\\times 10^{5}", "120000", "R(12,10)*10**5", "120000"),
    ("1.2\\times 10^{5}", "1.2e5", "R(12,10)*10**5", "R(12,10)*10**5"),
    ("1.2\\times 10^{5}", "120001", "R(12,10)*10**5", "120001"),
    ("3\\times10^{8}", "300000000", "3*10**8", "300000000"),
    ("3\\times10^{8}", "3\\times10^{9}", "3*10**8", "3*10**9"),
]:  # fmt: skip
    num("scientific", gold, resp, g, r)
num(
    "scientific",
    "6.02\\times10^{23}",
    "6.022\\times10^{23}",
    "R(602,100)*10**23",
    "R(6022,1000)*10**23",
    rel_tol=0.01,
)
num(
    "scientific",
    "6.02\\times10^{23}",
    "6.02\\times10^{22}",
    "R(602,100)*10**23",
    "R(602,100)*10**22",
    rel_tol=0.01,
)

# -- LaTeX variants ----------------------------------------------------------------------------
for gold, resp, g, r in [
    ("\\frac{1}{2}", "\\displaystyle\\frac{1}{2}", "R(1,2)", "R(1,2)"),
    ("\\frac{1}{2}", "$\\frac{1}{2}$", "R(1,2)", "R(1,2)"),
    ("\\frac{1}{2}", "\\frac 12", "R(1,2)", "R(1,2)"),
    ("\\frac{1}{2}", "{1}/{2}", "R(1,2)", "R(1,2)"),
    ("\\frac{1}{2}", "\\left(\\frac{1}{2}\\right)", "R(1,2)", "R(1,2)"),
    ("\\frac{1}{2}", "\\mathbf{\\frac{1}{2}}", "R(1,2)", "R(1,2)"),
    ("2\\sqrt{2}", "2 \\sqrt 2", "2*sqrt(2)", "2*sqrt(2)"),
    ("6", "2\\times 3", "6", "6"),
    ("6", "2\\cdot 3", "6", "6"),
    ("6", "\\text{6}", "6", "6"),
    ("6", "\\mathrm{6}", "6", "6"),
    ("1000000", "1\\,000\\,000", "1000000", "1000000"),
    ("1000000", "10^{6}", "1000000", "10**6"),
    ("-3", "−3", "-3", "-3"),
    ("\\frac{\\pi}{2}", "\\tfrac{\\pi}{2}", "pi/2", "pi/2"),
    ("\\frac{\\pi}{2}", "\\dfrac{\\pi}{2}", "pi/2", "pi/2"),
    ("0.5", "0{.}5", "R(1,2)", "R(1,2)"),
    ("10", "\\boxed{10}", "10", "10"),
]:
    num("latex", gold, resp, g, r)

# -- text answers ------------------------------------------------------------------------------
for gold, resp, same in [
    ("\\text{yes}", "\\text{Yes}", 1),
    ("\\text{yes}", "\\text{no}", 0),
    ("\\text{Tuesday}", "\\text{tuesday}", 1),
    ("\\text{Tuesday}", "Tuesday", 1),
    ("\\text{Tuesday}", "\\text{Wednesday}", 0),
    ("\\text{east}", "\\text{teas}", 0),
    ("NaCl", "NaCl", 1),
    ("NaCl", "ClNa", 0),
    ("\\text{even}", "\\text{odd}", 0),
    ("\\text{even}", "\\textbf{even}", 1),
    ("\\text{isosceles}", "\\text{Isosceles}", 1),
    ("\\text{isosceles}", "\\text{scalene}", 0),
    ("\\text{yes}", "\\text{yes}.", 1),
]:
    word = "the same word (case and markup aside)" if same else "different words"
    hand("text", gold, resp, same, f"hand: {word}")

# -- reasoning left open: no final answer ------------------------------------------------------
for completion, proof in [
    ("<think>it is \\boxed{42} and then the tokens ran out", "<think> never closed"),
    ("<think>maybe \\boxed{42}</think>I am not sure.", "the box is only in the reasoning"),
    ("it is \\boxed{42}</think>That is all.", "the box is only in the reasoning"),
    ("\\boxed{42", "the box is never closed"),
    ("\\boxed{}", "an empty box"),
    ("a</think>b<think>c \\boxed{42}", "a second <think> never closed"),
    ("so \\boxed{41} ... wait, let me redo this. <think>it is \\boxed{42}", "<think> never closed"),
    ("<think>\\boxed{42}", "<think> never closed"),
    ("Let me think step by step. First, 6 times 7 is", "cut off before any answer"),
    ("<think>6*7 = 42</think>", "nothing after the reasoning"),
    ("I cannot solve this.", "a refusal, no answer"),
]:
    hand("open", "42", "", 0, f"hand: no final answer: {proof}", completion=completion)
for completion in [
    "<think>maybe \\boxed{41}</think>So \\boxed{42}.",
    "the sum is 41... no, 42 \\boxed{41}</think>Final: \\boxed{42}",
    "First \\boxed{41}, then on reflection \\boxed{42}.",
]:
    hand("open", "42", "", 1, "hand: the last box after the reasoning is 42", completion=completion)


def bare_math_verify(gold: str, completion: str) -> int:
    from math_verify import parse, verify

    try:
        golds = parse("\\boxed{" + gold + "}", parsing_timeout=60)
        return int(bool(verify(golds, parse(completion, parsing_timeout=60), timeout_seconds=60)))
    except Exception:
        return 0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="also print the agreement figures")
    args = p.parse_args()
    for row in ROWS:
        row["math_verify"] = bare_math_verify(row["gold"], row["response"])
    TABLE.parent.mkdir(parents=True, exist_ok=True)
    with TABLE.open("w") as f:
        for row in ROWS:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    mv = sum(r["math_verify"] == r["verdict"] for r in ROWS)
    print(f"{len(ROWS)} rows -> {TABLE}; bare math-verify agrees on {mv}/{len(ROWS)}")
    if args.check:
        from agreement import agreement

        agreement(ROWS)


if __name__ == "__main__":
    main()
