"""Word sorting mistake: the number of the first wrong thought in a sorting trace, or "No".

SynLogic layout: ``metadata.words`` (the list sorted), ``metadata.thoughts`` (the whole trace as
one string, "Thought 1: ... Thought 2: ..."), ``metadata.is_mistake`` and ``metadata.answer``
(the number of the first wrong thought, an integer, or null when there is no mistake); the
row's ``answer`` is that number too.

The prompts ask for ``\\boxed{No}`` when every thought is right, else ``\\boxed{N}``. The final
answer block must be exactly one whole number or "No" (any case; wrappers read through as in
``i3_logic.answers``); "Thought 5" names the thought too. A block with anything else ("5 or 6",
"No, 5") scores 0. Upstream read the last ``\\boxed{}`` only.
"""

from __future__ import annotations

import re

from i3_logic.answers import answer_block, clean
from i3_logic.puzzle import Puzzle, PuzzleDataError, require

NAME = "word_sorting_mistake"
ALIASES = ()
_NUMBER = re.compile(r"(?:thought\s*)?(\d{1,4})", re.IGNORECASE)


def truth(puzzle: Puzzle) -> int | None:
    """The first wrong thought, None when there is none."""
    return puzzle.metadata["answer"] if puzzle.metadata["is_mistake"] else None


def check(puzzle: Puzzle) -> None:
    words, thoughts, is_mistake, answer = require(
        puzzle.metadata, NAME, "words", "thoughts", "is_mistake", "answer"
    )
    if not isinstance(words, list) or not words or not all(isinstance(w, str) for w in words):
        raise PuzzleDataError(f"{NAME} metadata 'words' must be a non-empty list of words")
    if not isinstance(thoughts, str) or not isinstance(is_mistake, bool):
        raise PuzzleDataError(f"{NAME} metadata: 'thoughts' must be a string, 'is_mistake' a bool")
    if is_mistake:
        steps = len(re.findall(r"Thought \d+:|思考 \d+:", thoughts))
        if type(answer) is not int or answer < 1 or (steps and answer > steps):
            raise PuzzleDataError(
                f"{NAME} metadata 'answer' must be the number of a thought when is_mistake"
            )
    elif answer is not None:
        raise PuzzleDataError(f"{NAME} metadata 'answer' must be null when there is no mistake")


def verify(puzzle: Puzzle, text: str) -> float:
    want = truth(puzzle)
    block = clean(answer_block(text)).strip(" .!*`_")
    if block.lower() == "no":
        return 1.0 if want is None else 0.0
    m = _NUMBER.fullmatch(block)
    if m is None:
        return 0.0
    return 1.0 if want is not None and int(m.group(1)) == want else 0.0
