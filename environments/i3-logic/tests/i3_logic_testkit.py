"""What i3-logic's tests share: the real SynLogic rows of ``rows/``, table-driven verdict and
rejection tests, and the pieces the independent judges are built from.

The family tests pin a family's grading as tables (reply -> score, broken row -> rejected);
`verdicts_test` and `rejected_test` turn a table into the one parametrized test each such
table needs, so every family's table is checked the same way.
"""

from __future__ import annotations

import ast
import itertools
import operator
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from i3_logic import Puzzle, PuzzleDataError, generate, puzzle_from_info, verify

from verifiers.testing import jsonl_rows

ROWS_DIR = Path(__file__).parent / "rows"

#: Python's comparison operators by AST node, for judges that walk ``ast.parse`` output.
COMPARISONS: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Gt: operator.gt,
    ast.Lt: operator.lt,
    ast.GtE: operator.ge,
    ast.LtE: operator.le,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
#: + - * / by AST node (``/`` true division: exact on ``Fraction`` operands).
ARITHMETIC: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


def metadata_puzzle(task: str, question: str = "q", **metadata: Any) -> Puzzle:
    """A puzzle of `task` given by its `metadata` alone (no reference answer): the families
    whose verifier checks the rules against the metadata."""
    return Puzzle(task, question, "", 1, metadata)


#: A 3x3 minesweeper board in SynLogic's layout ("X" hidden, mine cells counted from 0):
#: (0, 0) is the one mine, so the other hidden cell, (2, 2), is safe.
MINES = metadata_puzzle(
    "minesweeper",
    revealed_grid=[["X", "1", "0"], ["1", "1", "0"], ["0", "0", "X"]],
    current_mines=[[0, 0]],
)


def real_rows(name: str) -> list[dict[str, Any]]:
    """The real rows of ``rows/<name>.jsonl`` (INTELLECT-3-RL ``logic`` rows)."""
    return jsonl_rows(ROWS_DIR / f"{name}.jsonl")


def real_puzzles(name: str) -> list[Puzzle]:
    """The puzzles of `real_rows` (name), in file order."""
    return [puzzle_from_info(r["info"]) for r in real_rows(name)]


def row_params(name: str) -> list[Any]:
    """``(row, puzzle)`` parameters, one per real row of `name` (ids: the row's index)."""
    return [
        pytest.param(row, puzzle_from_info(row["info"]), id=str(i))
        for i, row in enumerate(real_rows(name))
    ]


def generated_in_row_layout(family: str, seed: int) -> list[Puzzle]:
    """The family's generated puzzles at levels 1-3 (index 0), after checking that each
    carries every metadata key all its real rows carry (SynLogic's layout, as upstream's
    verifier reads it)."""
    layout = set.intersection(*(set(p.metadata) for p in real_puzzles(family)))
    out = [generate(family, seed, level, 0) for level in (1, 2, 3)]
    for p in out:
        assert set(p.metadata) >= layout, (family, sorted(layout - set(p.metadata)))
    return out


def verdicts_test(table: Sequence[tuple[Puzzle, str, float]]) -> Callable[..., None]:
    """A test that ``i3_logic.verify`` gives each ``(puzzle, reply, score)`` of `table` its
    score."""

    @pytest.mark.parametrize("puzzle,reply,score", table)
    def test(puzzle: Puzzle, reply: str, score: float) -> None:
        assert verify(puzzle, reply) == score

    return test


def replies_test(puzzle: Puzzle, table: Sequence[tuple[str, float]]) -> Callable[..., None]:
    """`verdicts_test` for a table of ``(reply, score)`` replies to one `puzzle`."""
    return verdicts_test([(puzzle, reply, score) for reply, score in table])


def wrong_replies_test(puzzle: Puzzle, replies: Sequence[str]) -> Callable[..., None]:
    """`verdicts_test` for `replies` to one `puzzle` that must each score 0.0."""
    return verdicts_test([(puzzle, reply, 0.0) for reply in replies])


def rejected_test(check: Callable[[Puzzle], None], broken: Sequence[Puzzle]) -> Callable[..., None]:
    """A test that `check` (a family's) raises ``PuzzleDataError`` for every puzzle of `broken`."""

    @pytest.mark.parametrize("puzzle", broken)
    def test(puzzle: Puzzle) -> None:
        with pytest.raises(PuzzleDataError):
            check(puzzle)

    return test


def latin_squares(n: int) -> Iterator[list[list[int]]]:
    """Every n x n Latin square over 1..n, by extending rows that clash in no column."""
    perms = list(itertools.permutations(range(1, n + 1)))

    def extend(rows: list[tuple[int, ...]]) -> Iterator[list[list[int]]]:
        if len(rows) == n:
            yield [list(r) for r in rows]
            return
        for p in perms:
            if all(p[c] != r[c] for r in rows for c in range(n)):
                yield from extend([*rows, p])

    yield from extend([])


#: A `changed` value that removes its key from the metadata.
REMOVED: Any = object()


def changed(puzzle: Puzzle, changes: Sequence[dict[str, Any]], question: str = "q") -> list[Puzzle]:
    """Copies of `puzzle` (no answer) with each of `changes` applied to its metadata (a value
    `REMOVED` drops the key): rows one fault away from a good one."""
    out = []
    for change in changes:
        metadata = {**puzzle.metadata, **change}
        metadata = {k: v for k, v in metadata.items() if v is not REMOVED}
        out.append(Puzzle(puzzle.task, question, "", 1, metadata))
    return out


def broken_metadata_test(
    check: Callable[[Puzzle], None], task: str, metadata: Sequence[dict[str, Any]]
) -> Callable[..., None]:
    """`rejected_test` for rows of `task` whose metadata is one of `metadata` (question
    ``"q"``, no answer)."""
    return rejected_test(check, [Puzzle(task, "q", "", 1, m) for m in metadata])


def broken_answers_test(
    check: Callable[[Puzzle], None], task: str, answers: Sequence[str], question: str = "q"
) -> Callable[..., None]:
    """`rejected_test` for rows of `task` (no metadata) whose reference answer is one of
    `answers`."""
    return rejected_test(check, [Puzzle(task, question, a, 1, {}) for a in answers])
