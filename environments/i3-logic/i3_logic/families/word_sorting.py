"""Word sorting under a changed alphabet: some letters moved to the front, in a given order.

SynLogic layout: ``metadata.words`` (the words as shown), ``metadata.sorted_words`` (sorted
under the new alphabet, increasing), ``metadata.front_letters`` (the moved letters, comma
separated, in their new order) and ``metadata.order`` (1 increasing, -1 decreasing); ``answer``
is the requested order joined by ", ". The new alphabet is the front letters followed by the
other letters in their usual order; a word that is a prefix of another comes first. The prompts
ask for ``\\boxed{word1,word2,word3}``; the answer block may also list the words in any common
form (spaces, commas, one per line, numbered, a list literal; see
``i3_logic.answers.list_items``). It must be exactly the requested order (case-insensitive),
with no word missing, repeated or added.

The generator draws from a built-in list of common English words (written for this package):
level 1 sorts 6 words with 2 front letters, level 2 10 words with 3, level 3 16 words from four
initial letters with 4 front letters. Half the puzzles ask for decreasing order.
"""

from __future__ import annotations

import random
import string
from functools import cache
from pathlib import Path

from i3_logic.answers import answer_block, list_items
from i3_logic.puzzle import (
    ANSWER_INSTRUCTION,
    Puzzle,
    PuzzleDataError,
    require,
)

NAME = "word_sorting"
ALIASES = ()
LEVELS = {1: (6, 2), 2: (10, 3), 3: (16, 4)}
ALPHABET = string.ascii_lowercase

WORDS_FILE = Path(__file__).parents[1] / "data" / "words.txt"


@cache
def word_list() -> list[str]:
    """The generator's words: ``data/words.txt``, one a line (sorted, distinct)."""
    return WORDS_FILE.read_text().split()


def new_alphabet(front: list[str]) -> list[str]:
    return front + [c for c in ALPHABET if c not in front]


def sort_words(words: list[str], front: list[str]) -> list[str]:
    """Upstream's order: letters ranked by the new alphabet, anything else after every letter."""
    rank = {c: i for i, c in enumerate(new_alphabet(front))}
    return sorted(words, key=lambda w: [rank.get(c, len(rank)) for c in w.lower()])


def front_letters(value: object) -> list[str]:
    """``"q,r"`` (SynLogic's form) or ``["q", "r"]`` as a list of distinct lower-case letters."""
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(c, str) for c in items):
        raise PuzzleDataError(f"{NAME} metadata 'front_letters' must be letters joined by ','")
    letters = [c.strip().lower() for c in items]
    if not letters or len(set(letters)) != len(letters) or any(c not in ALPHABET for c in letters):
        raise PuzzleDataError(f"{NAME} metadata 'front_letters' must be distinct letters a-z")
    return letters


def generate(rng: random.Random, difficulty: int) -> Puzzle:
    count, n_front = LEVELS[difficulty]
    if difficulty == 3:
        # Draw from a few first letters so neighbours share prefixes.
        initials = rng.sample(sorted({w[0] for w in word_list()}), 4)
        pool = [w for w in word_list() if w[0] in initials]
        words = rng.sample(pool, min(count, len(pool)))
    else:
        words = rng.sample(word_list(), count)
    # Front letters taken from the words' own letters, so the changed alphabet matters.
    front = rng.sample(sorted(set("".join(words))), n_front)
    order = rng.choice((1, -1))
    ordered = sort_words(words, front)
    answer = ", ".join(ordered if order == 1 else ordered[::-1])
    moved = ", ".join(front[:-1]) + f" and {front[-1]}"
    direction = "increasing" if order == 1 else "decreasing"
    question = (
        f"In a new alphabet the letters {moved} come first, in that order, followed by the "
        "remaining letters in their usual order. Sort the words below in "
        f"{direction} order under this alphabet (a word that is the start of another comes "
        "before it) and list them separated by commas.\n\n"
        f"Words: {','.join(words)}\n\n{ANSWER_INSTRUCTION}"
    )
    metadata = {
        "words": words,
        "sorted_words": ordered,
        "front_letters": ",".join(front),
        "order": order,
    }
    return Puzzle(NAME, question, answer, difficulty, metadata)


def check(puzzle: Puzzle) -> None:
    words, ordered, front, order = require(
        puzzle.metadata, NAME, "words", "sorted_words", "front_letters", "order"
    )
    for key, value in (("words", words), ("sorted_words", ordered)):
        if (
            not isinstance(value, list)
            or not value
            or not all(isinstance(w, str) and w for w in value)
        ):
            raise PuzzleDataError(f"{NAME} metadata {key!r} must be a non-empty list of words")
    if type(order) is not int or order not in (1, -1):
        raise PuzzleDataError(f"{NAME} metadata 'order' must be 1 or -1")
    if ordered != sort_words(words, front_letters(front)):
        raise PuzzleDataError(
            f"{NAME} metadata 'sorted_words' is not 'words' sorted under the new alphabet"
        )


def expected(puzzle: Puzzle) -> list[str]:
    """The words in the order the prompt asks for."""
    ordered = list(puzzle.metadata["sorted_words"])
    return ordered if puzzle.metadata["order"] == 1 else ordered[::-1]


def verify(puzzle: Puzzle, text: str) -> float:
    want = [w.lower() for w in expected(puzzle)]
    given = [w.lower() for w in list_items(answer_block(text))]
    return 1.0 if given == want else 0.0
