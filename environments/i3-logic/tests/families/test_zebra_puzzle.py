"""Zebra puzzles: rows solved by brute force, JSON answers compared type-safely, no eval."""

from __future__ import annotations

import itertools
import json

import pytest
from i3_logic import Puzzle, verify
from i3_logic.families import zebra_puzzle as family
from i3_logic.puzzle import PuzzleDataError
from i3_logic_testkit import real_puzzles, replies_test

PUZZLES = real_puzzles(family.NAME)

# The clues of each row, as predicates over (name -> house, value -> house), houses from 1.
CLUES = [
    (
        ["Eric", "Ana", "Raj"],
        ["tea", "milk", "coffee"],
        [
            lambda n, v: n["Ana"] == 2,
            lambda n, v: n["Eric"] < n["Raj"],
            lambda n, v: v["coffee"] == 3,
            lambda n, v: v["milk"] != n["Eric"],
        ],
    ),
    (
        ["Alice", "Bob", "Carol", "Dan"],
        ["cat", "dog", "bird", "fish"],
        [
            lambda n, v: n["Carol"] == 1,
            lambda n, v: v["dog"] == n["Carol"] + 1,
            lambda n, v: n["Bob"] == 4,
            lambda n, v: v["dog"] == n["Alice"],
            lambda n, v: v["fish"] == n["Bob"] - 1,
            lambda n, v: v["bird"] != n["Carol"],
        ],
    ),
]


@pytest.mark.parametrize("index", range(len(CLUES)))
def test_rows_have_the_unique_solution(index):
    names, values, clues = CLUES[index]
    houses = range(1, len(names) + 1)
    solutions = []
    for pn in itertools.permutations(houses):
        for pv in itertools.permutations(houses):
            n, v = dict(zip(names, pn, strict=True)), dict(zip(values, pv, strict=True))
            if all(c(n, v) for c in clues):
                solutions.append((n, v))
    assert len(solutions) == 1
    n, v = solutions[0]
    rows = [
        [str(h), next(k for k in names if n[k] == h), next(k for k in values if v[k] == h)]
        for h in houses
    ]
    assert json.loads(PUZZLES[index].answer)["rows"] == rows


P = PUZZLES[0]
SOLUTION = json.loads(P.answer)


def fenced(value: str) -> str:
    return f"Reasoning first.\n```json\n{value}\n```"


test_answer_forms = replies_test(
    P,
    [
        (fenced(json.dumps(SOLUTION)), 1.0),
        (fenced(json.dumps(SOLUTION, indent=4)), 1.0),
        (fenced(repr(SOLUTION)), 1.0),  # a Python dict literal (upstream's eval fallback)
        (json.dumps(SOLUTION), 1.0),  # a bare JSON reply
        (f"<answer>{json.dumps(SOLUTION)}</answer>", 1.0),
        (fenced("{}") + "\n" + fenced(json.dumps(SOLUTION)), 1.0),  # the last block counts
        (fenced(json.dumps(SOLUTION)) + "\n" + fenced("{}"), 0.0),
        (fenced(json.dumps({**SOLUTION, "rows": SOLUTION["rows"][::-1]})), 0.0),
        (fenced(json.dumps({**SOLUTION, "extra": 1})), 0.0),
        (fenced(json.dumps({**SOLUTION, "rows": [[1, *r[1:]] for r in SOLUTION["rows"]]})), 0.0),
        (fenced(json.dumps(SOLUTION["rows"])), 0.0),  # a list, not the object
        (fenced("dict(header=[], rows=[])"), 0.0),  # a call: never evaluated
        (fenced("__import__('os').system('echo hacked')"), 0.0),
        (fenced("{" * 5000), 0.0),
        (fenced(json.dumps(SOLUTION, indent=" " * 2000)), 0.0),  # over the size bound
        ("The solution is in the table above.", 0.0),
        ("", 0.0),
    ],
)


def test_reference_given_as_an_object_or_as_plain_text():
    as_object = Puzzle(family.NAME, P.question, str(SOLUTION), 1, {})  # dict in the game data
    assert verify(as_object, fenced(json.dumps(SOLUTION))) == 1.0
    plain = Puzzle(family.NAME, P.question, "Eric", 1, {})  # not JSON: exact string, as upstream
    assert verify(plain, fenced("Eric")) == 1.0
    assert verify(plain, fenced("eric")) == 0.0


def test_check_rejects_rows_without_a_solution():
    with pytest.raises(PuzzleDataError):
        family.check(Puzzle(family.NAME, P.question, "", 1, {}))
