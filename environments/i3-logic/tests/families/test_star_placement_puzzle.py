"""Star placement (SynLogic layout): rows solved by brute force; the dictionary answer."""

from __future__ import annotations

import itertools
import re

import pytest
from i3_logic import Puzzle, puzzle_from_info, verify
from i3_logic.families import star_placement_puzzle as family
from i3_logic_testkit import broken_metadata_test, real_rows, wrong_replies_test

ROWS = real_rows(family.NAME)


def placements(region: list[list[str]]) -> list[set[tuple[int, int]]]:
    """Every valid one-star placement (1-based cells), by brute force over column orders."""
    n = len(region)
    found = []
    for cols in itertools.permutations(range(n)):
        if any(abs(cols[r] - cols[r + 1]) <= 1 for r in range(n - 1)):
            continue
        if len({region[r][c] for r, c in enumerate(cols)}) == n:
            found.append({(r + 1, c + 1) for r, c in enumerate(cols)})
    return found


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["question"][:30])
def test_row_right_replies_are_valid_placements(row):
    p = puzzle_from_info(row["info"])
    valid = placements(p.metadata["region_grid"])
    assert valid
    for reply in row["_right"]:
        cells = {(int(a), int(b)) for a, b in re.findall(r"\((\d+), (\d+)\)", reply)}
        assert cells in valid


REGION = [list(r) for r in "AABB AABB CCDD CCDD".split()]
P = Puzzle(family.NAME, "q", "", 1, {"n": 4, "k": 1, "region_nums": 4, "region_grid": REGION})
DICT = "{'A': [(1, 2)], 'B': [(2, 4)], 'C': [(3, 1)], 'D': [(4, 3)]}"


def test_dictionary_in_a_python_block_and_other_forms():
    assert verify(P, f"Checked.\n```python\n{DICT}\n```") == 1.0
    assert verify(P, f"```python\nstars = {DICT}\n```") == 1.0
    # As upstream, the letters the stars are filed under are not checked.
    assert verify(P, "```python\n{'A': [(1, 2), (2, 4), (3, 1), (4, 3)]}\n```") == 1.0
    assert verify(P, "<answer>(1, 2), (2, 4), (3, 1), (4, 3)</answer>") == 1.0


test_bad_replies_score_zero = wrong_replies_test(
    P,
    [
        "",
        DICT,  # no block: the prompt asks for a python block
        "```python\n{'A': [(1, 2)], 'B': [(2, 3)], 'C': [(3, 1)], 'D': [(4, 4)]}\n```",  # touch
        "```python\n{'A': [(1, 2), (1, 2)], 'B': [(2, 4)], 'C': [(3, 1)], 'D': [(4, 3)]}\n```",
        f"```python\n{DICT} or {DICT}\n```",
        "```python\n{'A': [(1, 2)], 'B': __import__('os')}\n```",
        "```python\n{'A': [(1, 2, 3)]}\n```",
        "```python\n{'A': [" + "(1, 2), " * 900 + "]}\n```",
    ],
)


def test_two_stars_per_region_when_k_is_two():
    region = [list("AAAAAA"), list("AAAAAA"), list("BBBCCC")] + [list("DDDEEE")] * 3
    p = Puzzle(family.NAME, "q", "", 1, {"n": 6, "k": 2, "region_grid": region})
    family.check(p)
    assert verify(p, "```python\n{'A': [(1, 1)]}\n```") == 0.0


test_check_rejects_broken_metadata = broken_metadata_test(
    family.check,
    family.NAME,
    [
        {"regions": ["AABB", "AABB", "CCDD", "CCDD"]},  # this package's old layout
        {"n": 4, "k": 1, "region_grid": REGION[:3]},
        {"n": 4, "k": 0, "region_grid": REGION},
    ],
)
