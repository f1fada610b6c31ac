"""Word sorting: put a list of words in alphabetical order.

Words come from a built-in list of common English words (written for this package; no external
word file). Level 1 sorts 6 words, level 2 10 words, level 3 16 words with many shared
prefixes (so the order depends on later letters). The answer is the sorted words as a list in
any common form (spaces, commas, one per line, numbered, a list literal; see
``i3_logic.answers.list_items``); it must be exactly the sorted list (case-insensitive), with
no word missing, repeated or added.
"""

from __future__ import annotations

import random

from i3_logic.answers import answer_block, list_items
from i3_logic.puzzle import (
    ANSWER_INSTRUCTION,
    AnswerError,
    Puzzle,
    PuzzleDataError,
    require,
)

NAME = "word_sorting"
ALIASES = ()
LEVELS = {1: 6, 2: 10, 3: 16}

WORDS = sorted(
    set(
        """
        apple arrow autumn badge bakery balance bamboo banner barrel basket beacon bicycle
        blanket border bottle branch breeze bridge bucket butter cabin cactus camera candle
        canyon carpet castle cellar chalk channel chapter cherry chimney circle citizen
        clover cobalt coffee comet copper cotton county crayon cricket crystal curtain
        dagger dancer desert diesel dinner doctor dolphin domain donkey dragon drawer dream
        eagle echo eclipse elbow ember empire engine envelope falcon fabric feather fence
        ferry fiddle figure filter finger forest fossil fountain galaxy garden garlic gate
        ginger glacier glove goblet granite gravel guitar hammer harbor harvest hazel helmet
        hermit hollow honey horizon husky iceberg island ivory jacket jaguar jelly jigsaw
        journal jungle kettle kidney kingdom kitchen kitten ladder lagoon lantern laptop
        lemon lentil letter lily linen lizard lobster locket magnet maple marble market
        meadow melon mirror mitten monkey mosaic motor mountain muffin napkin nectar needle
        nickel noodle nutmeg oasis ocean olive onion orbit orchard otter oyster paddle
        palace panther parcel parrot pebble pepper pillow pilot planet pocket pony portal
        pretzel puzzle quarry quartz quill rabbit radish rafter raven ribbon river rocket
        saddle salmon sandal satin scarf shadow shelter signal silver sketch spider spiral
        squirrel statue summit sunset tablet tailor teapot thimble thunder ticket timber
        tomato tunnel turtle umbrella valley velvet violin voyage wagon walnut window winter
        wizard wombat yogurt zebra zephyr zipper
        """.split()
    )
)


def generate(rng: random.Random, difficulty: int) -> Puzzle:
    count = LEVELS[difficulty]
    if difficulty == 3:
        # Draw from a few first letters so neighbours share prefixes.
        letters = rng.sample(sorted({w[0] for w in WORDS}), 4)
        pool = [w for w in WORDS if w[0] in letters]
        words = rng.sample(pool, min(count, len(pool)))
    else:
        words = rng.sample(WORDS, count)
    answer = " ".join(sorted(words))
    question = (
        "Sort the following words alphabetically (A to Z) and list them separated by spaces.\n\n"
        f"Words: {' '.join(words)}\n\n{ANSWER_INSTRUCTION}"
    )
    return Puzzle(
        NAME, question, answer, difficulty, {"words": words, "sorted_words": sorted(words)}
    )


def check(puzzle: Puzzle) -> None:
    (words,) = require(puzzle.metadata, NAME, "words")
    if not isinstance(words, list) or not words or not all(isinstance(w, str) and w for w in words):
        raise PuzzleDataError(f"{NAME} metadata 'words' must be a non-empty list of words")


def verify(puzzle: Puzzle, text: str) -> float:
    expected = sorted(w.lower() for w in puzzle.metadata["words"])
    try:
        given = [w.lower() for w in list_items(answer_block(text))]
    except AnswerError:
        return 0.0
    return 1.0 if given == expected else 0.0
