"""Dyck language completion: close every open bracket of a sequence, in the right order.

SynLogic layout: ``metadata.question_sequence`` is the shown prefix and
``metadata.full_sequence`` the completed sequence (the prefix plus its unique shortest
completion; also ``answer``), with ``n_types``, ``total_length``, ``fill_length`` and
``nesting_depth``. The real prompts ask for the complete sequence and nothing else (no tags), so
a reply that is only brackets is read whole; otherwise its final answer block is used. The
answer is the completed sequence, or just the brackets to append (both say the same thing: the
completion of a prefix is only closers, a completed sequence starts with an opener). Spaces,
commas and quotes between symbols, a list literal of symbols and LaTeX/HTML spellings (``\\}``,
``\\rangle``, ``&gt;``) are read as the brackets they denote; anything else fails.

The generator cuts a random well-nested sequence while brackets are still open: level 1 has
two bracket kinds and about 10 symbols shown, level 2 three kinds and about 18, level 3 four
kinds and about 28.
"""

from __future__ import annotations

import random
import re

from i3_logic.answers import answer_block_or_bare, latex_brackets
from i3_logic.puzzle import (
    ANSWER_INSTRUCTION,
    AnswerError,
    Puzzle,
    PuzzleDataError,
    parse_literal,
    require,
    trace_id,
)

NAME = "dyck_language"
ALIASES = ()
PAIRS = {"(": ")", "[": "]", "{": "}", "<": ">"}
CLOSERS = {v: k for k, v in PAIRS.items()}
LEVELS = {1: (2, 8, 12), 2: (3, 14, 20), 3: (4, 22, 30)}
# A whole reply that is nothing but brackets (what the SynLogic prompt asks for).
BARE = re.compile(r"[`'\"]?[\s()\[\]{}<>]+[`'\"]?")


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
    """The shortest closing string of an open prefix (unique: the open stack reversed)."""
    return "".join(PAIRS[o] for o in reversed(open_stack(sequence)))


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
    prefix = "".join(seq)
    full = prefix + completion(prefix)
    question = (
        "Complete the bracket sequence below so that every bracket is closed in the right "
        "order, adding as few brackets as possible. The brackets are parentheses (), square "
        "brackets [], curly braces {} and angle brackets <>. Give the whole completed "
        "sequence.\n\n"
        f"{prefix}\n\n{ANSWER_INSTRUCTION}"
    )
    metadata = {
        "trace_id": trace_id(rng, version=None),
        "full_sequence": full,
        "question_sequence": prefix,
        "n_types": kinds,
        "total_length": len(full),
        "fill_length": len(full) - len(prefix),
        "nesting_depth": 0,
    }
    return Puzzle(NAME, question, full, difficulty, metadata)


def _squeeze(value: object, key: str) -> str:
    if not isinstance(value, str):
        raise PuzzleDataError(f"{NAME} metadata {key!r} must be a string")
    return "".join(value.split())


def check(puzzle: Puzzle) -> None:
    prefix, full = require(puzzle.metadata, NAME, "question_sequence", "full_sequence")
    prefix, full = _squeeze(prefix, "question_sequence"), _squeeze(full, "full_sequence")
    try:
        if not open_stack(prefix):
            raise ValueError("the question sequence has nothing left to close")
        if full != prefix + completion(prefix):
            raise ValueError(
                "full_sequence is not the question sequence plus its shortest completion"
            )
    except ValueError as e:
        raise PuzzleDataError(f"{NAME} metadata: {e}") from None


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
    prefix = _squeeze(puzzle.metadata["question_sequence"], "question_sequence")
    full = _squeeze(puzzle.metadata["full_sequence"], "full_sequence")
    given = symbols(answer_block_or_bare(text, BARE))
    # The completed sequence (what the prompt asks for), or the brackets to append.
    return 1.0 if given in (list(full), list(full[len(prefix) :])) else 0.0
