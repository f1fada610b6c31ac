"""Arrow maze: replies parsed as literals (never evaluated), rays counted; verdicts against a
judge that walks each arrow back to its number (a different method from the verifier's)."""

from __future__ import annotations

import itertools
import json
import random

import pytest
from i3_logic import Puzzle, puzzle_from_info, verify
from i3_logic.families import arrow_maze as family
from i3_logic_testkit import broken_metadata_test, real_rows, replies_test

ROWS = real_rows(family.NAME)
PUZZLES = [puzzle_from_info(r["info"]) for r in ROWS]
STEP = {"↑": (-1, 0), "↓": (1, 0), "←": (0, -1), "→": (0, 1)}
STEP |= {"↖": (-1, -1), "↗": (-1, 1), "↘": (1, 1), "↙": (1, -1)}


def judge(maze: list[list[str]], g: list[list[str]]) -> bool:
    """Every blank got an arrow, givens kept; walking back from each arrow over arrows of the
    same direction must end on a number; each number counts the arrows that end on it."""
    n, m = len(maze), len(maze[0])
    if len(g) != n or any(len(r) != m for r in g):
        return False
    for r, c in itertools.product(range(n), range(m)):
        if (maze[r][c] == "X" and g[r][c] not in STEP) or (
            maze[r][c] != "X" and g[r][c] != maze[r][c]
        ):
            return False
    counts = {(r, c): 0 for r, c in itertools.product(range(n), range(m)) if g[r][c].isdigit()}
    for r, c in itertools.product(range(n), range(m)):
        if g[r][c] in STEP:
            dr, dc = STEP[g[r][c]]
            i, j = r - dr, c - dc
            while 0 <= i < n and 0 <= j < m and g[i][j] == g[r][c]:
                i, j = i - dr, j - dc
            if not (0 <= i < n and 0 <= j < m and (i, j) in counts):
                return False
            counts[i, j] += 1
    return all(int(g[r][c]) == k for (r, c), k in counts.items())


@pytest.mark.parametrize("p", PUZZLES)
def test_rows_solutions_and_near_misses_are_graded_like_the_judge(p: Puzzle):
    maze, sol = p.metadata["maze"], p.metadata["solution"]
    assert judge(maze, sol) and json.loads(p.answer) == sol
    rng = random.Random(p.metadata["trace_id"])
    blanks = [(r, c) for r, row in enumerate(maze) for c, v in enumerate(row) if v == "X"]
    verdicts = set()
    for _ in range(300):
        g = [row[:] for row in sol]
        for r, c in rng.sample(blanks, rng.choice((1, 1, 2))):
            g[r][c] = rng.choice(list(STEP))
        want = judge(maze, g)
        verdicts.add(want)
        assert verify(p, f"```python\n{json.dumps(g, ensure_ascii=False)}\n```") == float(want)
    assert verdicts == {True, False}


@pytest.mark.parametrize(
    "maze",
    [
        [["2", "X", "X"]],
        [["X", "3"], ["X", "X"]],
        [["X", "2", "X"], ["X", "X", "2"]],
    ],
)
def test_every_filling_of_a_small_maze_is_graded_like_the_judge(maze):
    p = Puzzle(family.NAME, "q", "", 1, {"maze": maze})
    blanks = [(r, c) for r, row in enumerate(maze) for c, v in enumerate(row) if v == "X"]
    accepted = 0
    for arrows in itertools.product(STEP, repeat=len(blanks)):
        g = [row[:] for row in maze]
        for (r, c), a in zip(blanks, arrows, strict=True):
            g[r][c] = a
        want = judge(maze, g)
        accepted += want
        assert verify(p, json.dumps(g, ensure_ascii=False)) == float(want), g
    assert accepted >= 1


def test_a_number_written_into_a_blank_is_not_an_answer():
    # "1" then two blanks: with arrows only, the third cell can never be counted right, so
    # the puzzle has no solution. Upstream accepted ["1", "→", "0"]: the invented 0 has no
    # rays and every arrow is covered.
    p = Puzzle(family.NAME, "q", "", 1, {"maze": [["1", "X", "X"]]})
    assert verify(p, '```python\n[["1", "→", "0"]]\n```') == 0.0
    assert not any(
        verify(p, json.dumps([["1", a, b]], ensure_ascii=False))
        for a, b in itertools.product(STEP, repeat=2)
    )


P = PUZZLES[1]  # with prefilled arrows
SOL = P.metadata["solution"]
TEXT = json.dumps(SOL, ensure_ascii=False)
PREFILLED = next(
    (r, c) for r, row in enumerate(P.metadata["maze"]) for c, v in enumerate(row) if v in STEP
)


def _changed(r: int, c: int, value: str) -> str:
    g = [row[:] for row in SOL]
    g[r][c] = value
    return json.dumps(g, ensure_ascii=False)


test_replies = replies_test(
    P,
    [
        (f"```python\n{TEXT}\n```", 1.0),
        (f"```\n{TEXT}\n```", 1.0),
        (f"```python\nsolution = {TEXT}\n```", 1.0),
        (f"Here it is:\n{TEXT}", 1.0),  # a bare list (upstream's fallback)
        (f"<answer>{TEXT}</answer>", 1.0),
        (
            f"```python\n{_changed(*PREFILLED, '↓' if SOL[PREFILLED[0]][PREFILLED[1]] != '↓' else '↑')}\n```",
            0.0,
        ),
        (f"```python\n{json.dumps(P.metadata['maze'], ensure_ascii=False)}\n```", 0.0),
        (f"```python\n{TEXT} + []\n```", 0.0),  # an expression, never evaluated
        ('```python\n[["↑"] * 6] * 5\n```', 0.0),
        ("```python\n__import__('os').system('echo hacked')\n```", 0.0),
        (f"```python\n{TEXT[:-2]}]\n```", 0.0),
        (f"<answer>{TEXT}", 0.0),
        ("```python\n" + "[" * 3000 + "]" * 3000 + "\n```", 0.0),
        ("Every blank gets an arrow.", 0.0),
        ("", 0.0),
    ],
)


test_broken_metadata_is_refused = broken_metadata_test(
    family.check,
    family.NAME,
    [
        {},
        {"maze": "X1X"},
        {"maze": [["X", "1"], ["X"]]},
        {"maze": [["X", "Q"]]},
        {"maze": [["X", 1]]},
        {"maze": [["X", "1"]], "height": 2},
        {"maze": [["X", "1"]], "width": 3},
    ],
)
