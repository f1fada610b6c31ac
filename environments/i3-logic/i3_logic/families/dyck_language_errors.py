"""Dyck language errors: the 1-based position of the first bracket error, or -1 if none.

SynLogic layout: ``metadata.bracket_string`` (the sequence), ``first_error_pos`` (int, or null
for a valid string), ``is_valid``, ``n_types``, ``total_length`` and ``bracket_pairs`` (a list of
``{"open", "close"}``); ``answer`` is the position as a string, ``"-1"`` when valid. The first
error is the first closer with nothing open or of the wrong kind; a string whose only fault is
brackets left open at the end has its error at length + 1.

The position is recomputed from ``bracket_string`` rather than read from ``first_error_pos``:
upstream's generator stores ``is_valid: false`` with ``first_error_pos: null`` (answer
``"None"``, which upstream's verifier can never match) when its "unclosed" or "extra closing"
edit happens to leave a balanced string, and with one bracket kind its "mismatch" edit stores
the edited index although the string then fails only at its end.

The prompts ask for the number alone. The answer is one integer (``-1`` for a valid string):
the reply's final answer block, or the whole reply when it is just that integer. Upstream's
extractor instead returns ``-1`` if ``-1`` appears anywhere in the reply, else its first
non-negative integer, so "5, not -1" read as -1 and any step number in the reasoning as the
answer; here anything but one integer scores 0.
"""

from __future__ import annotations

import re

from i3_logic.answers import answer_block_or_bare
from i3_logic.families.dyck_language import CLOSERS, PAIRS
from i3_logic.puzzle import Puzzle, PuzzleDataError, require

NAME = "dyck_language_errors"
ALIASES = ()
_INTEGER = re.compile(r"[-\u2212]?\d{1,9}")
BARE = re.compile(r"\s*[-\u2212]?\d{1,9}\s*\.?\s*")


def first_error(sequence: str) -> int:
    """1-based position of the first error in ``sequence``, len + 1 if brackets stay open, -1
    if it is balanced."""
    stack: list[str] = []
    for i, ch in enumerate(sequence, 1):
        if ch in PAIRS:
            stack.append(ch)
        elif not stack or stack.pop() != CLOSERS[ch]:
            return i
    return len(sequence) + 1 if stack else -1


def _sequence(puzzle: Puzzle) -> str:
    (sequence,) = require(puzzle.metadata, NAME, "bracket_string")
    if not isinstance(sequence, str) or not sequence:
        raise PuzzleDataError(f"{NAME} metadata 'bracket_string' must be a non-empty string")
    if any(ch not in PAIRS and ch not in CLOSERS for ch in sequence):
        raise PuzzleDataError(f"{NAME} metadata 'bracket_string' holds a non-bracket character")
    return sequence


def check(puzzle: Puzzle) -> None:
    _sequence(puzzle)


def verify(puzzle: Puzzle, text: str) -> float:
    want = first_error(_sequence(puzzle))
    block = answer_block_or_bare(text, BARE)
    if not _INTEGER.fullmatch(block):
        return 0.0
    return 1.0 if int(block.replace("\u2212", "-")) == want else 0.0
