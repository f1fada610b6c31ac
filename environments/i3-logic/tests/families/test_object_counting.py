"""object_counting (object_properties reads its count the same way): the final answer block."""

from __future__ import annotations

import re

import pytest
from i3_logic import Puzzle, PuzzleDataError, puzzle_from_info, verify
from i3_logic.families import object_counting, object_properties
from i3_logic_testkit import real_rows

PLURAL = {"fruit": "fruits", "animal": "animals", "book": "books", "furniture": "furniture"}


def solve_counting(question: str, possessions: dict) -> int:
    """Recount from the story text; categories from the metadata's possessions."""
    category = {i[0]: c for p in possessions.values() for c, items in p.items() for i in items}
    mine: dict[str, int] = {}
    for who, count, item in re.findall(
        r"(I|My \w+) (?:also )?(?:have|has) (\d+) ([a-z ]+?)(?: \([^)]*\))?\.", question
    ):
        if who == "I":
            mine[category[item]] = mine.get(category[item], 0) + int(count)
    name = {v: k for k, v in PLURAL.items()}
    if m := re.search(r"total number of (\w+) and (\w+) that I have", question):
        return mine[name[m[1]]] + mine[name[m[2]]]
    m = re.search(r"difference between the number of (\w+) and (\w+) that I have", question)
    assert m, question
    return abs(mine[name[m[1]]] - mine[name[m[2]]])


@pytest.mark.parametrize("row", real_rows("object_counting"))
def test_counting_rows_are_right(row):
    pz = puzzle_from_info(row["info"])
    assert int(pz.answer) == solve_counting(row["question"], pz.metadata["possessions"])


@pytest.mark.parametrize("task", ["object_counting", "object_properties"])
@pytest.mark.parametrize(
    ("reply", "score"),
    [
        ("\\boxed{1234}", 1.0),
        ("\\boxed{1,234}", 1.0),
        ("\\boxed{\\text{1234}}", 1.0),  # upstream cut the box at its first }
        ("<answer>1234</answer>", 1.0),
        ("\\boxed{1233}", 0.0),
        ("\\boxed{1234.0}", 0.0),
        ("\\boxed{1234 items}", 0.0),
        ("\\boxed{1234 or 1235}", 0.0),
        ("\\boxed{12,34}", 0.0),
        ("\\boxed{unknown}", 0.0),
        ("I count 1234 in total.", 0.0),
        ("\\boxed{" + "9" * 5000 + "}", 0.0),
    ],
)
def test_verdicts(task, reply, score):
    assert verify(Puzzle(task, "q", "1234", 1, {}), reply) == score


def test_checks_reject_broken_rows():
    for module in (object_counting, object_properties):
        for answer in ("", "twelve", "12.5"):
            with pytest.raises(PuzzleDataError):
                module.check(Puzzle(module.NAME, "q", answer, 1, {}))
    with pytest.raises(PuzzleDataError):
        object_counting.check(Puzzle("object_counting", "q", "3", 1, {"possessions": []}))
    with pytest.raises(PuzzleDataError, match="disagrees"):
        object_properties.check(Puzzle("object_properties", "q", "3", 1, {"answer": "4"}))
    with pytest.raises(PuzzleDataError):
        object_properties.check(Puzzle("object_properties", "q", "3", 1, {"final_collection": "x"}))


HEDGE = object()  # the response offers no single integer answer
JUDGED = [  # (response, what it says, verdict) for the first row (12 + 25 + 3 + 14 = 54)
    ("54", 54, 1),
    ("\\text{54}", 54, 1),
    ("**54**", 54, 1),
    ("54.", 54, 1),
    ("95", 95, 0),  # the cousin's plums counted too
    ("53", 53, 0),
    ("54.0", HEDGE, 0),  # not the integer asked for
    ("54 or 55", HEDGE, 0),
    ("about 54", HEDGE, 0),
    ("fifty-four", HEDGE, 0),
]


@pytest.mark.parametrize(("response", "meaning", "verdict"), JUDGED)
def test_judged_table(response, meaning, verdict):
    row = real_rows("object_counting")[0]
    pz = puzzle_from_info(row["info"])
    truth = solve_counting(row["question"], pz.metadata["possessions"])
    assert (meaning is not HEDGE and meaning == truth) == bool(verdict)
    assert verify(pz, f"\\boxed{{{response}}}") == verdict
