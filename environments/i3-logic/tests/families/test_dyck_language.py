"""dyck_language in SynLogic's layout: rows checked by a solver, answer forms, broken rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from i3_logic import Puzzle, PuzzleDataError, generate, puzzle_from_info, verify
from i3_logic.families import dyck_language

ROWS = Path(__file__).parent.parent / "rows" / "dyck_language.jsonl"
PAIRS = {"(": ")", "[": "]", "{": "}", "<": ">"}
UPSTREAM_KEYS = {
    "trace_id",
    "full_sequence",
    "question_sequence",
    "n_types",
    "total_length",
    "fill_length",
    "nesting_depth",
}


def reduce(seq: str) -> str:
    """Delete adjacent matched pairs until none is left (not the package's stack method)."""
    while True:
        shorter = seq
        for o, c in PAIRS.items():
            shorter = shorter.replace(o + c, "")
        if shorter == seq:
            return seq
        seq = shorter


def solve(prefix: str) -> str:
    """The unique shortest completion: the unmatched openers, closed innermost first."""
    rest = reduce(prefix)
    assert rest and all(ch in PAIRS for ch in rest), "not an open prefix"
    return prefix + "".join(PAIRS[ch] for ch in reversed(rest))


def pz(prefix: str, full: str | None = None) -> Puzzle:
    full = solve(prefix) if full is None else full
    meta = {"question_sequence": prefix, "full_sequence": full, "n_types": 4}
    return Puzzle("dyck_language", "q", full, 1, meta)


def rows() -> list[dict]:
    return [json.loads(line) for line in ROWS.read_text().splitlines()]


def test_rows_hold_the_solved_sequence():
    for row in rows():
        p = puzzle_from_info(row["info"])
        meta = p.metadata
        assert meta["full_sequence"] == solve(meta["question_sequence"]) == p.answer
        assert meta["question_sequence"] in row["question"]
        assert meta["fill_length"] == len(meta["full_sequence"]) - len(meta["question_sequence"])


@pytest.mark.parametrize("level", [1, 2, 3])
def test_generated_puzzles_use_the_synlogic_layout(level):
    for index in range(3):
        p = generate("dyck_language", 4, level, index)
        assert set(p.metadata) == UPSTREAM_KEYS
        full, prefix = p.metadata["full_sequence"], p.metadata["question_sequence"]
        assert full == solve(prefix) == p.answer and " " not in full
        assert verify(p, f"<answer>{full}</answer>") == 1.0
        assert verify(p, full) == 1.0  # the bare reply the real prompts ask for
        assert verify(p, f"<answer>{full[len(prefix) :]}</answer>") == 1.0
        assert verify(p, f"<answer>{full}()</answer>") == 0.0
        assert verify(p, f"<answer>{prefix}</answer>") == 0.0


P = pz("([{}](<")  # -> ([{}](<>))


@pytest.mark.parametrize(
    "reply,score",
    [
        ("([{}](<>))", 1.0),
        ("  ( [ { } ] ( < > ) )\n", 1.0),
        ("`([{}](<>))`", 1.0),
        ("<answer>> ) )</answer>", 1.0),  # only the brackets to append
        ("The answer is ([{}](<>)).", 1.0),
        ("([{}](<>)]", 0.0),
        ("([{}](<>))()", 0.0),  # balanced, not the shortest
        ("([{}](<", 0.0),
        ("", 0.0),
        ("The completed sequence is ([{}](<>))", 0.0),  # prose, no answer block
        ("I would write:\n([{}](<>))", 0.0),
        ("<answer>([{}](<>)) or ([{}](<)>))</answer>", 0.0),
        ("<answer>([{}](<>)), ([{}](<>))</answer>", 0.0),
        ("(" * 5000, 0.0),
        ("<answer>" + "(" * 5000 + "</answer>", 0.0),
    ],
)
def test_answer_forms(reply, score):
    assert verify(P, reply) == score


@pytest.mark.parametrize(
    "meta",
    [
        {"question_sequence": "(["},  # no full_sequence
        {"full_sequence": "([])"},
        {"question_sequence": "([", "full_sequence": "([])()"},  # not the shortest
        {"question_sequence": "([", "full_sequence": "([)]"},
        {"question_sequence": "()", "full_sequence": "()"},  # nothing to close
        {"question_sequence": "(a", "full_sequence": "(a)"},
        {"question_sequence": 3, "full_sequence": "()"},
    ],
)
def test_broken_metadata_is_rejected(meta):
    with pytest.raises(PuzzleDataError):
        dyck_language.check(Puzzle("dyck_language", "q", "", 1, meta))
