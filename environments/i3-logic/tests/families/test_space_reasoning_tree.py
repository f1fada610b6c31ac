"""space_reasoning_tree: all cousins of an item in a described tree, as a set."""

from __future__ import annotations

import re

import pytest
from i3_logic import Puzzle, puzzle_from_info, verify
from i3_logic.families import space_reasoning_tree as fam
from i3_logic_testkit import broken_answers_test, real_rows, replies_test


def solve(question: str) -> str:
    """Cousins from the stated parent-child facts: children of the parent's siblings."""
    parent = {}
    for sentence in re.split(r"(?<=\.) ", question):
        m = re.fullmatch(r"(?:.*: )?([a-z ]+) has \d+ child(?:ren)?: ([a-z ,]+)\.", sentence)
        if m:
            for kid in m[2].split(", "):
                parent[kid] = m[1]
    asked = re.search(r"What is the cousin of the ([a-z ]+)\?", question)
    assert asked, question
    target = asked[1]
    grand = parent[parent[target]]
    uncles = [u for u, p in parent.items() if p == grand and u != parent[target]]
    return ", ".join(sorted(k for k, p in parent.items() if p in uncles))


@pytest.mark.parametrize("row", real_rows("space_reasoning_tree"))
def test_rows_are_right(row):
    assert puzzle_from_info(row["info"]).answer == solve(row["question"])


THREE = Puzzle("space_reasoning_tree", "q", "acorn, sunflower seed, thimble", 1, {})


test_verdicts = replies_test(
    THREE,
    [
        ("\\boxed{acorn, sunflower seed, thimble}", 1.0),
        ("\\boxed{thimble, Acorn, sunflower seed}", 1.0),  # upstream compared sets
        ("\\boxed{acorn，sunflower seed、thimble}", 1.0),
        ("\\boxed{acorn, sunflower seed, and thimble}", 1.0),
        ("\\boxed{['acorn', 'sunflower seed', 'thimble']}", 1.0),
        ("\\boxed{acorn, sunflowerseed, thimble}", 0.0),  # upstream deleted every space
        ("\\boxed{acorn, sunflower seed, thimble, acorn}", 0.0),
        ("\\boxed{acorn, thimble}", 0.0),
        ("\\boxed{acorn, sunflower seed, thimble, kite}", 0.0),
        ("\\boxed{acorn, sunflower seed or thimble}", 0.0),
        ("\\boxed{acorn, , thimble}", 0.0),
        ("acorn, sunflower seed, thimble", 0.0),
    ],
)


test_check_rejects_broken_answers = broken_answers_test(
    fam.check, "space_reasoning_tree", ["", "mug, mug", " , "]
)


def test_chinese_items_and_separators():
    pz = Puzzle("space_reasoning_tree", "q", "书架, 椅子", 1, {"language": "cn"})
    assert verify(pz, "所以答案是\\boxed{椅子，书架}") == 1.0
    assert verify(pz, "\\boxed{书架、椅子}") == 1.0
    assert verify(pz, "\\boxed{书架}") == 0.0
    assert verify(pz, "\\boxed{unknown}") == 0.0


HEDGE = object()  # the response is not one list of items
COUSINS = ["acorn", "pillow", "stapler", "thimble"]
JUDGED = [  # (response, the items it names, verdict) for the first row
    ("acorn, pillow, stapler, thimble", COUSINS, 1),
    ("thimble, stapler, pillow, acorn", COUSINS[::-1], 1),
    ("acorn，pillow，stapler，thimble", COUSINS, 1),
    ("acorn, pillow, stapler, and thimble", COUSINS, 1),
    ("['acorn', 'pillow', 'stapler', 'thimble']", COUSINS, 1),
    ("acorn\npillow\nstapler\nthimble", COUSINS, 1),
    ("acorn, pillow, stapler", COUSINS[:3], 0),
    ("acorn, pillow, stapler, thimble, sponge", [*COUSINS, "sponge"], 0),
    ("acorn, pillow, stapler, thimble, acorn", [*COUSINS, "acorn"], 0),
    ("sunflower seed", ["sunflower seed"], 0),
    ("acorn, pillow or stapler, thimble", HEDGE, 0),
]


@pytest.mark.parametrize(("response", "meaning", "verdict"), JUDGED)
def test_judged_table(response, meaning, verdict):
    row = real_rows("space_reasoning_tree")[0]
    truth = solve(row["question"]).split(", ")
    assert (meaning is not HEDGE and sorted(meaning) == truth) == bool(verdict)
    assert verify(puzzle_from_info(row["info"]), f"\\boxed{{{response}}}") == verdict
