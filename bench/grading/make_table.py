"""Build the grading table: (gold, response, verdict) rows across answer kinds, each verdict
confirmed independently of any LaTeX parser, and what bare math-verify says for each.

Every row (`table_rows.json`, grouped by answer kind) states what the two answers *mean* as
sympy objects written by hand (``num``: two numbers; ``obj``: sets, tuples, intervals,
matrices, polynomials, relations; ``hand``: a verdict with its proof; ``with``: what a
group's rows share), and the verdict is computed from those with exact arithmetic: equal after ``simplify``/``expand``, or
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
ROW_SPECS = Path(__file__).with_name("table_rows.json")
ROWS: list[dict[str, Any]] = []


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


def build_rows() -> list[dict[str, Any]]:
    """The table's rows, in `table_rows.json`'s order (each kind's ids count up in it)."""
    checks = {"num": num, "obj": obj, "hand": hand}
    ROWS.clear()
    for group in json.loads(ROW_SPECS.read_text()):
        check = checks[group["check"]]
        for spec in group["rows"]:
            own = spec[-1] if isinstance(spec[-1], dict) else {}
            args = spec[:-1] if own else spec
            check(group["kind"], *args, **group.get("with", {}), **own)
    return ROWS


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
    build_rows()
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
