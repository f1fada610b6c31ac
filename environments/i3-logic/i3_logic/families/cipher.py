"""Cipher: encrypt or decrypt a text by the rules the prompt states (KOR-Bench style).

SynLogic layout: only ``answer`` is used, the expected text in KOR-Bench's double brackets,
``"[[ULTRASONIC]]"``; the metadata carries nothing the verifier reads. (SynLogic never
published this task's generator; the layout is what its verifier reads.) Upstream's verifier
``eval``s the last ```` ```python ```` block of the reply (or the whole reply) and compares the
value with ``[["ULTRASONIC"]]``, the answer's text between the outer ``[[`` and ``]]``.

Here nothing is evaluated: the final answer block (or, with none, a whole reply that is just a
``[[...]]`` answer) is read as a literal ``[["TEXT"]]`` / ``[['TEXT']]`` by a literal-only parser,
or in KOR's own unquoted form ``[[TEXT]]``, or as the bare text; the text must equal the
expected one exactly (case and inner spaces count; outer spaces do not). A list with more than
one entry, or anything around the brackets, is not an answer. An ``answer`` not in double
brackets is taken whole (upstream cut its first and last two characters off whatever it was).
"""

from __future__ import annotations

import re

from i3_logic.answers import answer_block_or_bare, clean
from i3_logic.puzzle import AnswerError, Puzzle, PuzzleDataError, parse_literal

NAME = "cipher"
ALIASES = ()
_DOUBLE = re.compile(r"\[\[(.*)\]\]", re.DOTALL)


def expected(puzzle: Puzzle) -> str:
    answer = puzzle.answer.strip()
    m = _DOUBLE.fullmatch(answer)
    return (m.group(1) if m else answer).strip()


def check(puzzle: Puzzle) -> None:
    if not expected(puzzle):
        raise PuzzleDataError(f"{NAME} puzzle has no expected text in 'answer'")


def reading(block: str) -> str:
    """The text an answer block gives: from ``[["T"]]``, ``[[T]]`` or ``T``."""
    block = clean(block)
    if block.startswith("[["):
        try:
            value = parse_literal(block)
        except AnswerError:
            value = None
        if (
            isinstance(value, list)
            and len(value) == 1
            and isinstance(value[0], list)
            and len(value[0]) == 1
            and isinstance(value[0][0], str)
        ):
            return value[0][0].strip()
    m = _DOUBLE.fullmatch(block)
    return (m.group(1) if m else block).strip()


def verify(puzzle: Puzzle, text: str) -> float:
    # Upstream reads a reply without a code block whole: the same here, for a bare [[...]].
    given = reading(answer_block_or_bare(text, _DOUBLE))
    return 1.0 if given and given == expected(puzzle) else 0.0
