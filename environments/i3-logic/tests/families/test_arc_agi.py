"""ARC-AGI 1 and 2: the rows' rules re-applied, grids compared exactly, no eval."""

from __future__ import annotations

import json
import re

import pytest
from i3_logic import TASKS, Puzzle, puzzle_from_info, verify
from i3_logic.families import arc_agi as family
from i3_logic_testkit import broken_answers_test, real_rows, replies_test

ROWS = real_rows(family.NAME)
PUZZLES = {json.loads(r["info"])["task"]: puzzle_from_info(r["info"]) for r in ROWS}
RULES = {
    "arc_agi": lambda g: [row[::-1] for row in g],  # mirror left-right
    "arc_agi_2": lambda g: [[2 if v == 1 else v for v in row] for row in g],  # 1 -> 2
}


def grids(question: str) -> list[list[list[int]]]:
    return [json.loads(m) for m in re.findall(r"^\[\[.*\]\]$", question, re.MULTILINE)]


@pytest.mark.parametrize("task", sorted(RULES))
def test_rows_follow_their_examples(task):
    p = PUZZLES[task]
    *examples, test_input = grids(p.question)
    pairs = list(zip(examples[::2], examples[1::2], strict=True))
    assert len(pairs) == 2 and all(RULES[task](a) == b for a, b in pairs)
    game_data = json.loads(json.loads(ROWS[sorted(PUZZLES).index(task)]["info"])["game_data_str"])
    assert isinstance(game_data["answer"], list)  # the grid itself, as upstream compares it
    assert game_data["answer"] == RULES[task](test_input)


def test_both_keys_share_the_verifier():
    assert TASKS["arc_agi_2"].name == family.NAME


P = PUZZLES["arc_agi"]
GRID = json.loads(P.answer)


test_answer_forms = replies_test(
    P,
    [
        (f"```json\n{json.dumps(GRID)}\n```", 1.0),
        (f"<answer>```json\n{json.dumps(GRID, indent=2)}\n```</answer>", 1.0),
        (json.dumps(GRID), 1.0),  # a bare grid
        (f"```json\n{json.dumps([[bool(v) for v in r] for r in GRID])}\n```", 0.0),
        (f"```json\n{json.dumps(GRID[:-1])}\n```", 0.0),
        (f"```json\n{json.dumps(GRID)} or {json.dumps(GRID[::-1])}\n```", 0.0),
        (f"```json\n{json.dumps([GRID, GRID])}\n```", 0.0),
        ("```json\n[[1] * 3] * 3\n```", 0.0),  # an expression: never evaluated
        ("```json\n" + "[" * 3000 + "]" * 3000 + "\n```", 0.0),
        ("The grid is the mirror image of the input.", 0.0),
        ("", 0.0),
    ],
)


def test_a_30x30_grid_pretty_printed_is_read():
    grid = [[(r * c) % 10 for c in range(30)] for r in range(30)]
    p = Puzzle(family.NAME, "q", json.dumps(grid), 1, {})
    text = json.dumps(grid, indent=2)
    assert len(text) > 4000  # past the common bound: ARC answers have their own
    assert verify(p, f"```json\n{text}\n```") == 1.0


def test_reference_given_as_text_is_parsed():
    # Upstream compared the parsed reply with the answer as stored: a grid stored as text could
    # never score. Both forms verify here.
    as_text = Puzzle(family.NAME, P.question, json.dumps(GRID), 1, {})
    assert verify(as_text, f"```json\n{json.dumps(GRID)}\n```") == 1.0


test_check_rejects_rows_without_a_grid = broken_answers_test(
    family.check, family.NAME, ["", "[1, 2]", "[[1, 'a']]", "[]", "mirror"], question=P.question
)
