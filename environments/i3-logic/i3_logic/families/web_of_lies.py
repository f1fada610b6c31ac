"""Web of lies: a chain of people who each say whether the previous one tells the truth.

The first person's honesty is stated; every later person says the previous one lies or tells
the truth; the question asks about the last person. Level 1 has 4 people, level 2 6, level 3 9
(with the statements shuffled into a random order). Truth values are recomputed from the stored
chain; the answer must be exactly one of Yes or No (case-insensitive; wrappers read through as
in ``i3_logic.answers``), optionally restated about the person asked ("No, Celia lies.").
"""

from __future__ import annotations

import random
import re

from i3_logic.answers import answer_block, choice, clean
from i3_logic.puzzle import (
    ANSWER_INSTRUCTION,
    AnswerError,
    Puzzle,
    PuzzleDataError,
    require,
)

NAME = "web_of_lies"
ALIASES = ()
LEVELS = {1: 4, 2: 6, 3: 9}
NAMES = (
    "Amara Bruno Celia Dario Elif Farid Greta Hugo Ines Jonas Kemal Lena Mateo Nadia Oskar "
    "Priya Quentin Rosa Samir Tove Umar Vera Wren Ximena Yusuf Zora"
).split()


def truths(first_truthful: bool, claims: list[bool]) -> list[bool]:
    """Honesty of each person; ``claims[i]`` is person i+1 saying person i tells the truth."""
    values = [first_truthful]
    for says_truthful in claims:
        # An honest speaker's claim is right; a liar's claim is wrong.
        values.append(says_truthful == values[-1])
    return values


def generate(rng: random.Random, difficulty: int) -> Puzzle:
    count = LEVELS[difficulty]
    people = rng.sample(NAMES, count)
    first = rng.random() < 0.5
    claims = [rng.random() < 0.5 for _ in range(count - 1)]
    statements = [f"{people[0]} {'tells the truth' if first else 'lies'}."]
    statements += [
        f"{people[i + 1]} says {people[i]} {'tells the truth' if c else 'lies'}."
        for i, c in enumerate(claims)
    ]
    if difficulty == 3:
        rng.shuffle(statements)
    answer = "Yes" if truths(first, claims)[-1] else "No"
    question = (
        " ".join(statements)
        + f"\nDoes {people[-1]} tell the truth? The answer is Yes or No.\n{ANSWER_INSTRUCTION}"
    )
    metadata = {"people": people, "first_truthful": first, "claims": claims}
    return Puzzle(NAME, question, answer, difficulty, metadata)


def check(puzzle: Puzzle) -> None:
    people, first, claims = require(puzzle.metadata, NAME, "people", "first_truthful", "claims")
    if not isinstance(first, bool) or not isinstance(claims, list) or not isinstance(people, list):
        raise PuzzleDataError(
            f"{NAME} metadata: first_truthful must be a bool, people and claims lists"
        )
    if not all(isinstance(c, bool) for c in claims) or len(people) != len(claims) + 1:
        raise PuzzleDataError(f"{NAME} metadata: one boolean claim per person after the first")


_HONEST = r"tells? the truth|is telling the truth|is truthful|is honest|is a truth-teller"
_LIAR = (
    r"lies?|is lying|is a liar|does not tell the truth|doesn't tell the truth|is not truthful"
    r"|is dishonest"
)


def reading(block: str, person: str) -> str | None:
    """ "yes" or "no" from the answer block, or None when it is not exactly one of them.

    Besides a bare Yes/No, the answer may restate itself about the person asked ("No, Celia
    lies.", "Celia tells the truth"); a restatement that contradicts the Yes/No, or is about
    someone else, is not an answer.
    """
    plain = choice(block, ("yes", "no"))
    if plain is not None:
        return plain
    text = clean(block).strip(" .!").lower()
    name = re.escape(person.lower())
    m = re.fullmatch(
        rf"(?:(yes|no)\s*[,.:;!\u2014-]\s*)?(?:(?:{name}|he|she|they)\s+)?({_HONEST}|{_LIAR})", text
    )
    if not m:
        return None
    stated = "yes" if re.fullmatch(_HONEST, m.group(2)) else "no"
    return stated if m.group(1) in (None, stated) else None


def verify(puzzle: Puzzle, text: str) -> float:
    meta = puzzle.metadata
    truthful = truths(meta["first_truthful"], meta["claims"])[-1]
    try:
        answer = reading(answer_block(text), str(meta["people"][-1]))
    except AnswerError:
        return 0.0
    if answer is None:
        return 0.0
    return 1.0 if (answer == "yes") == truthful else 0.0
