"""Dyck language completion: close every open bracket of a sequence, in the right order.

The prefix is a random well-nested sequence cut while brackets are still open. Level 1 uses two
bracket kinds and about 10 symbols, level 2 three kinds and about 18, level 3 four kinds and
about 28. The shortest completion is unique; the verifier accepts exactly the brackets that
close the open stack (spaces between symbols are ignored).
"""

from __future__ import annotations

import random

from i3_logic.puzzle import (
    ANSWER_INSTRUCTION,
    AnswerError,
    Puzzle,
    PuzzleDataError,
    answer_text,
    require,
)

NAME = "dyck_language"
ALIASES = ()
PAIRS = {"(": ")", "[": "]", "{": "}", "<": ">"}
CLOSERS = {v: k for k, v in PAIRS.items()}
LEVELS = {1: (2, 8, 12), 2: (3, 14, 20), 3: (4, 22, 30)}


def open_stack(sequence: str) -> list[str]:
    """The unclosed openers of ``sequence``; ``ValueError`` if it closes wrongly."""
    stack: list[str] = []
    for ch in sequence:
        if ch in PAIRS:
            stack.append(ch)
        elif ch in CLOSERS:
            if not stack or stack[-1] != CLOSERS[ch]:
                raise ValueError(f"unmatched {ch!r}")
            stack.pop()
        elif not ch.isspace():
            raise ValueError(f"not a bracket: {ch!r}")
    return stack


def completion(sequence: str) -> str:
    return " ".join(PAIRS[o] for o in reversed(open_stack(sequence)))


def generate(rng: random.Random, difficulty: int) -> Puzzle:
    kinds, lo, hi = LEVELS[difficulty]
    openers = list(PAIRS)[:kinds]
    length = rng.randint(lo, hi)
    while True:
        seq: list[str] = []
        stack: list[str] = []
        while len(seq) < length:
            # Open while short of depth, else close with some probability.
            if stack and (rng.random() < 0.45 or len(stack) + len(seq) >= length + 4):
                seq.append(PAIRS[stack.pop()])
            else:
                o = rng.choice(openers)
                stack.append(o)
                seq.append(o)
        if stack and len(stack) >= 1 + difficulty // 2:
            break
    prefix = " ".join(seq)
    answer = completion(prefix)
    question = (
        "Complete the following bracket sequence so that every bracket is closed in the correct "
        "order. Give only the brackets that must be appended (the shortest completion), "
        "separated by spaces.\n\n"
        f"Sequence: {prefix}\n\n{ANSWER_INSTRUCTION}"
    )
    return Puzzle(NAME, question, answer, difficulty, {"sequence": prefix, "completion": answer})


def check(puzzle: Puzzle) -> None:
    (sequence,) = require(puzzle.metadata, NAME, "sequence")
    try:
        if not isinstance(sequence, str) or not open_stack(sequence):
            raise ValueError("nothing left to close")
    except ValueError as e:
        raise PuzzleDataError(
            f"{NAME} metadata 'sequence' is not an open Dyck prefix: {e}"
        ) from None


def verify(puzzle: Puzzle, text: str) -> float:
    stack = open_stack(puzzle.metadata["sequence"])
    try:
        answer = answer_text(text)
    except AnswerError:
        return 0.0
    symbols = [ch for ch in answer if not ch.isspace()]
    if any(ch not in CLOSERS for ch in symbols):
        return 0.0
    return 1.0 if symbols == [PAIRS[o] for o in reversed(stack)] else 0.0
