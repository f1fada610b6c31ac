"""Agreement with the grading table's verdicts: bare math-verify (the table's ``math_verify``
column) beside i3-math and i3-science, each graded in-process exactly as its worker pool
grades (the environment's parser, then its rubric's grading function and arguments).

    uv run --no-sync python bench/grading/agreement.py     # prints per-kind figures
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

TABLE = Path(__file__).parents[2] / "packages/verifiers/tests/data/grading_table.jsonl"


def load_rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in TABLE.read_text().splitlines() if line.strip()]


def _messages(row: dict[str, Any]) -> tuple[list[dict], list[dict]]:
    prompt = [{"role": "user", "content": row["question"]}]
    return prompt, [{"role": "assistant", "content": row["response"]}]


def grade_i3_math(env: Any, row: dict[str, Any]) -> int:
    from verifiers.rubrics.math_rubric import grade_math_answer

    prompt, completion = _messages(row)
    args = env.rubric.math.grading_args(completion, row["gold"], prompt)
    return 0 if args is None else int(grade_math_answer(*args)[0])


def grade_i3_science(env: Any, row: dict[str, Any]) -> int:
    from i3_science import check_answer

    prompt, completion = _messages(row)
    rubric = env.rubric
    response = rubric.parser.parse_answer(completion) or ""
    if not response or len(response) > rubric.max_answer_chars:
        return 0
    args = rubric.check_args(prompt, row["gold"], response)
    return 0 if args is None else int(check_answer(*args)[0])


def environments(rel_tol: float) -> dict[str, Any]:
    """Both environments with the tolerance a row states (no worker pool is started)."""
    import i3_math
    import i3_science

    return {
        "i3-math": i3_math.load_environment(source="sample", numeric_rel_tol=rel_tol),
        "i3-science": i3_science.load_environment(source="sample", numeric_rel_tol=rel_tol),
    }


def agreement(rows: list[dict[str, Any]]) -> dict[str, int]:
    envs: dict[float, dict[str, Any]] = {}
    hits: Counter[str] = Counter()
    by_kind: dict[str, Counter[str]] = {}
    wrong: list[str] = []
    t0 = time.perf_counter()
    for row in rows:
        pair = envs.setdefault(row["rel_tol"], environments(row["rel_tol"]))
        got = {
            "math-verify": row["math_verify"],
            "i3-math": grade_i3_math(pair["i3-math"], row),
            "i3-science": grade_i3_science(pair["i3-science"], row),
        }
        kind = by_kind.setdefault(row["kind"], Counter())
        kind["rows"] += 1
        for name, verdict in got.items():
            ok = verdict == row["verdict"]
            hits[name] += ok
            kind[name] += ok
            if not ok and name != "math-verify":
                wrong.append(f"{name} {row['id']}: {row['gold']!r} vs {row['response']!r}")
    elapsed = time.perf_counter() - t0
    print(f"{'kind':<12} {'rows':>4} {'math-verify':>12} {'i3-math':>8} {'i3-science':>10}")
    for kind, c in by_kind.items():
        print(
            f"{kind:<12} {c['rows']:>4} {c['math-verify']:>12} {c['i3-math']:>8} {c['i3-science']:>10}"
        )
    n = len(rows)
    print(
        f"{'all':<12} {n:>4} {hits['math-verify']:>12} {hits['i3-math']:>8} {hits['i3-science']:>10}"
        f"   ({elapsed:.1f} s in-process)"
    )
    for line in wrong:
        print("DISAGREES", line)
    return dict(hits)


if __name__ == "__main__":
    agreement(load_rows())
