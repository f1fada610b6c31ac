"""Dyck language completion: close every open bracket of a sequence, in the right order.

The prefix is a random well-nested sequence cut while brackets are still open. Level 1 uses two
bracket kinds and about 10 symbols, level 2 three kinds and about 18, level 3 four kinds and
about 28. The shortest completion is unique. The verifier accepts it written either as the
brackets to append (what the prompt asks for) or as the whole completed sequence (the prefix
followed by exactly those brackets): both answer the question. Spaces, commas and quotes
between symbols, a list literal of symbols and LaTeX/HTML spellings (``\\}``, ``\\rangle``,
``&gt;``) are read as the brackets they denote; anything else (words, a second candidate) fails.
"""

from __future__ import annotations

import random

from i3_logic.answers import answer_block, latex_brackets
from i3_logic.puzzle import (
    ANSWER_INSTRUCTION,
    AnswerError,
    Puzzle,
    PuzzleDataError,
    parse_literal,
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


def symbols(answer: str) -> list[str]:
    """The bracket symbols an answer writes; ``AnswerError`` if it holds anything else."""
    text = latex_brackets(answer)
    if text.startswith("[") and text.endswith("]"):
        try:
            value = parse_literal(text)
        except AnswerError:
            value = None  # brackets, not a list literal: e.g. "[ ( ) ]"
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            text = "".join(value)
    # Separators and emphasis marks between symbols carry no bracket: skipped.
    found = [ch for ch in text if not (ch.isspace() or ch in ",'\"`*")]
    if not found or any(ch not in PAIRS and ch not in CLOSERS for ch in found):
        raise AnswerError("not a bracket sequence")
    return found


def verify(puzzle: Puzzle, text: str) -> float:
    sequence = puzzle.metadata["sequence"]
    closing = [PAIRS[o] for o in reversed(open_stack(sequence))]
    prefix = [ch for ch in sequence if not ch.isspace()]
    try:
        given = symbols(answer_block(text))
    except AnswerError:
        return 0.0
    # The brackets to append, or the completed sequence: the prefix followed by them.
    return 1.0 if given in (closing, prefix + closing) else 0.0
