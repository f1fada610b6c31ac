"""Futoshiki in SynLogic's layout: prefilled values read from the question's grid, signs from
``constraints``; verdicts against a judge over every Latin square of the 4x4 rows."""

from __future__ import annotations

import json
import operator
import re

import pytest
from i3_logic import Puzzle, puzzle_from_info, verify
from i3_logic.families import futoshiki as family
from i3_logic.puzzle import PuzzleDataError
from i3_logic_testkit import REMOVED, changed, latin_squares, real_rows, rejected_test, replies_test

ROWS = real_rows(family.NAME)
PUZZLES = [puzzle_from_info(r["info"]) for r in ROWS]
COMPARE = {"<": operator.lt, ">": operator.gt}


def shown_grid(question: str, n: int) -> list[list[str]]:
    """The puzzle grid: the n lines after the header line (English or Chinese)."""
    lines = question.splitlines()
    start = next(i for i, line in enumerate(lines) if re.search(r"Current puzzle:|当前题目", line))
    return [line.split() for line in lines[start + 1 : start + 1 + n]]


def judge(p: Puzzle, g: list[list[int]]) -> bool:
    m = p.metadata
    n = m["grid_size"]
    shown = shown_grid(p.question, n)
    latin = all(sorted(line) == list(range(1, n + 1)) for line in [*g, *zip(*g, strict=True)])
    kept = all(shown[r][c] == str(g[r][c]) for r, c in m["prefilled_coords"])
    signs = all(COMPARE[s](g[a][b], g[c][d]) for (a, b), (c, d), s in m["constraints"])
    return latin and kept and signs


@pytest.mark.parametrize(
    "index", [i for i, p in enumerate(PUZZLES) if p.metadata["grid_size"] == 4]
)
def test_every_4x4_latin_square_is_graded_as_the_judge_says(index):
    p = PUZZLES[index]
    verdicts = set()
    for g in latin_squares(4):
        want = judge(p, g)
        assert verify(p, family.bracket_text(g)) == float(want), g
        verdicts.add(want)
    assert verdicts == {True, False}


def test_rows_solutions_satisfy_the_judge():
    for row, p in zip(ROWS, PUZZLES, strict=True):
        solution = json.loads(json.loads(row["info"])["game_data_str"])["answer"]
        assert judge(p, solution)  # upstream stores the solution grid itself as the answer


CHINESE = next(p for p in PUZZLES if "当前题目" in p.question)
FULL_ROW = next(p for p in PUZZLES if p.metadata["grid_size"] == 5)


def test_prefilled_values_are_read_from_a_chinese_prompt_too():
    # Upstream looked only for "Current puzzle:", so a Chinese prompt's givens were never checked.
    coords = CHINESE.metadata["prefilled_coords"]
    shown = shown_grid(CHINESE.question, 4)
    breaking = [
        g
        for g in latin_squares(4)
        if all(
            COMPARE[s](g[a][b], g[c][d]) for (a, b), (c, d), s in CHINESE.metadata["constraints"]
        )
        and any(shown[r][c] != str(g[r][c]) for r, c in coords)
    ]
    assert breaking and all(verify(CHINESE, family.bracket_text(g)) == 0.0 for g in breaking)


def test_a_wholly_given_row_keeps_the_grid_aligned():
    # Upstream skipped grid lines without an X, shifting every later row's givens.
    shown = shown_grid(FULL_ROW.question, 5)
    assert any("X" not in line for line in shown)
    _, prefilled, _ = family._parts(FULL_ROW)
    assert prefilled == {(r, c): int(shown[r][c]) for r, c in FULL_ROW.metadata["prefilled_coords"]}


P = PUZZLES[0]
SOL = json.loads(json.loads(ROWS[0]["info"])["game_data_str"])["answer"]
WRONG = next(g for g in latin_squares(4) if not judge(P, g))


test_replies = replies_test(
    P,
    [
        (family.bracket_text(SOL), 1.0),
        ("[[" + ", ".join(" ".join(map(str, r)) for r in SOL) + "]]", 1.0),
        (f"draft {family.bracket_text(WRONG)} ... final {family.bracket_text(SOL)}", 1.0),
        (f"<answer>{SOL}</answer>", 1.0),
        ("<answer>\n" + "\n".join(" ".join(map(str, r)) for r in SOL) + "\n</answer>", 1.0),
        (f"{family.bracket_text(SOL)} then {family.bracket_text(WRONG)}", 0.0),  # the last counts
        (f"<answer>{family.bracket_text(SOL)} or {family.bracket_text(WRONG)}</answer>", 0.0),
        ("[[" + " ".join(str(v) for r in SOL for v in r) + "]]", 0.0),  # no row separators
        ("[[" + ",".join(" ".join(map(str, r)) for r in SOL[:3]) + "]]", 0.0),
        ("[[" + ",".join(" ".join(map(str, r)) for r in SOL[:3]) + ",1 2 3]]", 0.0),
        (f"<answer>{family.bracket_text(SOL)}", 0.0),  # the tag never closed
        ("[[" + "1 " * 3000 + "]]", 0.0),
        ("[[a b c d,e f g h,i j k l,m n o p]]", 0.0),
        ("Each row and column holds 1 to 4 once.", 0.0),
        ("", 0.0),
    ],
)


def test_prefilled_values_come_from_the_answer_when_the_question_has_no_grid():
    meta = P.metadata
    bare = Puzzle(family.NAME, "no grid here", str(SOL), 1, meta)
    assert verify(bare, family.bracket_text(SOL)) == 1.0
    with pytest.raises(PuzzleDataError, match="prefilled values"):
        family.check(Puzzle(family.NAME, "no grid here", "", 1, meta))


test_broken_metadata_is_refused = rejected_test(
    family.check,
    changed(
        P,
        [
            {"grid_size": REMOVED},
            {"grid_size": "4"},
            {"grid_size": 40},
            {"constraints": [[[0, 0], [0, 1], "="]]},
            {"constraints": [[[0, 0], [0, 9], "<"]]},
            {"constraints": [[0, 0, 0, 1]]},
            {"prefilled_coords": [[4, 0]]},
            {"prefilled_coords": "0,0"},
        ],
        question=P.question,
    ),
)


def test_a_prefilled_cell_shown_blank_is_refused():
    r, c = next(
        (r, c) for r in range(4) for c in range(4) if [r, c] not in P.metadata["prefilled_coords"]
    )
    meta = {**P.metadata, "prefilled_coords": [*P.metadata["prefilled_coords"], [r, c]]}
    with pytest.raises(PuzzleDataError, match="blank"):
        family.check(Puzzle(family.NAME, P.question, "", 1, meta))
