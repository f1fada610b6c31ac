"""space_reasoning: the item reached by a walk on the grid; answer = that item's name."""

from __future__ import annotations

import re

import pytest
from i3_logic import Puzzle, PuzzleDataError, puzzle_from_info, verify
from i3_logic.families import space_reasoning as fam
from i3_logic_testkit import real_rows, replies_test

STEP = {"right": (0, 1), "left": (0, -1), "down": (1, 0), "up": (-1, 0)}


def solve(question: str) -> str:
    """Walk the described moves on a square grid, recording the item seen at each vertex."""
    story, ask = question.split("Question: ")
    pos, seen = (0, 0), {}
    first = re.search(r"You see a ([a-z ]+?), ", story)
    assert first, story
    seen[pos] = first[1]
    for moves, item in re.findall(
        r"((?:then \d+ step\(s\) \w+(?:, )?)+), and you see a ([a-z ]+)", story
    ):
        for k, d in re.findall(r"(\d+) step\(s\) (\w+)", moves):
            pos = (pos[0] + STEP[d][0] * int(k), pos[1] + STEP[d][1] * int(k))
        assert seen.setdefault(pos, item) == item
    for k, d in re.findall(r"go (\d+) step\(s\) (\w+)", ask):
        pos = (pos[0] + STEP[d][0] * int(k), pos[1] + STEP[d][1] * int(k))
    return seen.get(pos, "unknown")


@pytest.mark.parametrize("row", real_rows("space_reasoning"))
def test_rows_are_right(row):
    pz = puzzle_from_info(row["info"])
    assert pz.answer == solve(row["question"])
    assert set(pz.metadata) == {"shape", "language", "num_waypoints", "unknown_node_num", "n"}


SEED = Puzzle("space_reasoning", "q", "sunflower seed", 1, {})


test_verdicts = replies_test(
    SEED,
    [
        ("\\boxed{sunflower seed}", 1.0),
        ("\\boxed{Sunflower Seed}", 1.0),
        ("\\boxed{\\text{sunflower  seed}}", 1.0),
        ("\\boxed{a sunflower seed}", 1.0),
        ("\\boxed{sunflower}", 0.0),
        ("\\boxed{sunflowerseed}", 0.0),
        ("\\boxed{sunflower seed or kite}", 0.0),
        ("\\boxed{I see the sunflower seed}", 0.0),
        ("\\boxed{unknown}", 0.0),
        ("sunflower seed", 0.0),
    ],
)


def test_an_article_is_only_dropped_from_the_reply():
    anchor = Puzzle("space_reasoning", "q", "anchor", 1, {})
    assert verify(anchor, "\\boxed{an anchor}") == 1.0
    assert verify(anchor, "\\boxed{a nchor}") == 0.0


def test_check_rejects_a_missing_answer():
    with pytest.raises(PuzzleDataError):
        fam.check(Puzzle("space_reasoning", "q", "  ", 1, {}))


def test_chinese_item():
    pz = Puzzle("space_reasoning", "q", "折叠桌", 1, {"language": "cn"})
    assert verify(pz, "看到的物品是\\boxed{折叠桌}") == 1.0
    assert verify(pz, "\\boxed{桌子}") == 0.0


HEDGE = object()  # the response names no single item
JUDGED = [  # (response, what it says, verdict) for the first row
    ("sunflower seed", "sunflower seed", 1),
    ("Sunflower Seed", "sunflower seed", 1),
    ("\\text{sunflower seed}", "sunflower seed", 1),
    ("**sunflower seed**", "sunflower seed", 1),
    ("a sunflower seed", "sunflower seed", 1),
    ("compass", "compass", 0),
    ("anchor", "anchor", 0),
    ("sunflowerseed", "sunflowerseed", 0),
    ("sunflower", "sunflower", 0),
    ("unknown", "unknown", 0),
    ("sunflower seed or kite", HEDGE, 0),
]


@pytest.mark.parametrize(("response", "meaning", "verdict"), JUDGED)
def test_judged_table(response, meaning, verdict):
    row = real_rows("space_reasoning")[0]
    assert (meaning is not HEDGE and meaning == solve(row["question"])) == bool(verdict)
    assert verify(puzzle_from_info(row["info"]), f"\\boxed{{{response}}}") == verdict
