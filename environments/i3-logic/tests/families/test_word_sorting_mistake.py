"""word_sorting_mistake: each row's trace re-derived step by step, answer forms, broken rows."""

from __future__ import annotations

import string

from i3_logic import Puzzle, puzzle_from_info
from i3_logic.families import word_sorting_mistake as family
from i3_logic_testkit import changed, real_rows, rejected_test, verdicts_test


def rank(word: str, pos: int) -> int:
    return string.ascii_lowercase.index(word[pos]) + 1 if pos < len(word) else 0


def show(group: list[str]) -> str:
    return f'"{group[0]}"' if len(group) == 1 else "[" + " ? ".join(f'"{w}"' for w in group) + "]"


def correct_trace(words: list[str]) -> tuple[list[str], list[str]]:
    """The thoughts of a right letter-by-letter bucket sort, and the order it ends with."""
    thoughts: list[str] = []
    groups = [list(words)]
    pos = 0
    while any(len(g) > 1 for g in groups):
        done: list[list[str]] = []
        for i, group in enumerate(groups):
            if len(group) == 1:
                done.append(group)
                continue
            letters = " ".join(
                f'"{w}": "{w[pos] if pos < len(w) else ""}" ({rank(w, pos)}).' for w in group
            )
            thoughts.append(f"Look at letter {pos + 1} of {show(group)}: {letters}")
            buckets: dict[int, list[str]] = {}
            for w in group:
                buckets.setdefault(rank(w, pos), []).append(w)
            done += [buckets[r] for r in sorted(buckets)]
            thoughts.append("Now we have: " + " < ".join(map(show, done + groups[i + 1 :])) + ".")
        groups = done
        pos += 1
    return [f"Thought {n}: {t}" for n, t in enumerate(thoughts, 1)], [g[0] for g in groups]


def test_rows_answer_is_the_first_thought_that_differs_from_a_right_trace():
    for row in real_rows("word_sorting_mistake"):
        p = puzzle_from_info(row["info"])
        m = p.metadata
        right, order = correct_trace(m["words"])
        assert order == sorted(m["words"])
        given = [t for t in m["thoughts"].splitlines() if t.startswith("Thought ")]
        assert len(given) == len(right)
        differ = [n for n, (a, b) in enumerate(zip(given, right, strict=True), 1) if a != b]
        assert m["answer"] == (differ[0] if differ else None)
        assert m["is_mistake"] == bool(differ)
        assert m["thoughts"] in row["question"]


def pz(answer: int | None, steps: int = 8) -> Puzzle:
    thoughts = " ".join(f"Thought {i}: ..." for i in range(1, steps + 1))
    meta = {"words": ["a", "b"], "thoughts": thoughts, "is_mistake": answer is not None}
    return Puzzle(family.NAME, "q", str(answer or ""), 1, {**meta, "answer": answer})


THREE, NO = pz(3), pz(None)


test_answer_forms = verdicts_test(
    [
        (THREE, "\\boxed{3}", 1.0),
        (THREE, "The first mistake: \\boxed{3}.", 1.0),
        (THREE, "<answer>Thought 3</answer>", 1.0),
        (THREE, "\\boxed{4}", 0.0),
        (THREE, "\\boxed{No}", 0.0),
        (THREE, "\\boxed{3 or 4}", 0.0),
        (THREE, "\\boxed{3, 5}", 0.0),
        (THREE, "I think thought 3 is wrong.", 0.0),  # no answer block
        (THREE, "\\boxed{}", 0.0),
        (THREE, "", 0.0),
        (NO, "\\boxed{No}", 1.0),
        (NO, "<answer>no</answer>", 1.0),
        (NO, "\\boxed{\\text{No}}", 1.0),
        (NO, "\\boxed{2}", 0.0),
        (NO, "\\boxed{No, 2}", 0.0),
        (NO, "\\boxed{None}", 0.0),
    ]
)


test_broken_metadata_is_rejected = rejected_test(
    family.check,
    changed(
        THREE,
        [
            {"is_mistake": True, "answer": None},
            {"is_mistake": False, "answer": 3},
            {"answer": 9},  # there are 8 thoughts
            {"answer": 0},
            {"answer": "3"},
            {"is_mistake": "yes"},
            {"thoughts": ["Thought 1: ..."]},
            {"words": []},
        ],
    ),
)


def test_the_good_rows_pass_check():
    family.check(THREE)
    family.check(NO)
