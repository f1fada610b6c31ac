"""object_properties: the count of matching items after the transformations."""

from __future__ import annotations

import re

import pytest
from i3_logic import Puzzle, PuzzleDataError, puzzle_from_info, verify
from i3_logic_testkit import real_rows

KEYS = {
    "size": "sizes",
    "color": "colors",
    "origin": "countries",
    "material": "materials",
    "smell": "smells",
}


def simulate(initial: list[dict], story: str) -> list[dict]:
    items = [dict(i) for i in initial]
    for sentence in story.split("Then, ")[1:]:
        if m := re.match(r"I lost all my (\S+) items", sentence):
            items = [i for i in items if i["sizes"] != m[1]]
        elif m := re.match(
            r"I accidentally spilled paint on all my (\S+) items, changing their "
            r"colors to (\S+?)\.",
            sentence,
        ):
            for i in items:
                if i["sizes"] == m[1]:
                    i["colors"] = m[2]
        else:
            raise AssertionError(sentence)
    return items


@pytest.mark.parametrize("row", real_rows("object_properties"))
def test_properties_rows_are_right(row):
    pz = puzzle_from_info(row["info"])
    meta = pz.metadata
    final = simulate(meta["initial_collection"], meta["story"])
    assert final == meta["final_collection"]
    wanted = re.findall(r"(size|color|origin|material|smell) is (\w+)", meta["question"])
    count = sum(any(i[KEYS[k]] == v for k, v in wanted) for i in final)
    assert pz.answer == meta["answer"] == str(count)


def test_a_count_beside_prose_in_the_box_is_not_an_answer():
    pz = Puzzle("object_properties", "q", "3", 1, {"answer": "3"})
    assert verify(pz, "\\boxed{3}") == 1.0
    assert verify(pz, "\\boxed{3 items}") == 0.0
    assert verify(pz, "\\boxed{unknown}") == 0.0
    with pytest.raises(PuzzleDataError):
        verify(Puzzle("object_properties", "q", "unknown", 1, {}), "\\boxed{3}")


HEDGE = object()  # the response offers no single integer answer
JUDGED = [  # (response, what it says, verdict) for the first row
    ("3", 3, 1),
    ("**3**", 3, 1),
    ("3.", 3, 1),
    ("4", 4, 0),  # the small red teapot was lost
    ("2", 2, 0),
    ("5", 5, 0),
    ("3 or 4", HEDGE, 0),
    ("3.0", HEDGE, 0),
    ("unknown", HEDGE, 0),
]


@pytest.mark.parametrize(("response", "meaning", "verdict"), JUDGED)
def test_judged_table(response, meaning, verdict):
    pz = puzzle_from_info(real_rows("object_properties")[0]["info"])
    meta = pz.metadata
    final = simulate(meta["initial_collection"], meta["story"])
    wanted = re.findall(r"(size|color|origin|material|smell) is (\w+)", meta["question"])
    truth = sum(any(i[KEYS[k]] == v for k, v in wanted) for i in final)
    assert (meaning is not HEDGE and meaning == truth) == bool(verdict)
    assert verify(pz, f"\\boxed{{{response}}}") == verdict
