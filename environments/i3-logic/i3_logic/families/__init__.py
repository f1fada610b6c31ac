"""The table of puzzle families: each module has ``generate(rng, difficulty) -> Puzzle``,
``verify(puzzle, text) -> float`` and ``check(puzzle)`` (raises ``PuzzleDataError`` when a
stored puzzle lacks the ground truth its verifier needs).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

from i3_logic.families import (
    boolean_expressions,
    cryptarithm,
    dyck_language,
    futoshiki,
    game_of_24,
    kukurasu,
    minesweeper,
    skyscraper_puzzle,
    star_placement_puzzle,
    sudoku,
    web_of_lies,
    word_sorting,
)
from i3_logic.puzzle import Puzzle, PuzzleDataError

LEVEL_NAMES = {"easy": 1, "medium": 2, "hard": 3}


@dataclass(frozen=True, slots=True)
class Family:
    name: str
    aliases: tuple[str, ...]
    generate: Callable[[random.Random, int], Puzzle]
    verify: Callable[[Puzzle, str], float]
    check: Callable[[Puzzle], None]
    summary: str

    @classmethod
    def from_module(cls, module: ModuleType) -> Family:
        summary = (module.__doc__ or "").strip().splitlines()[0]
        return cls(
            module.NAME,
            tuple(module.ALIASES),
            module.generate,
            module.verify,
            module.check,
            summary,
        )


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in map(
        Family.from_module,
        (
            game_of_24,
            sudoku,
            dyck_language,
            boolean_expressions,
            word_sorting,
            cryptarithm,
            minesweeper,
            futoshiki,
            skyscraper_puzzle,
            kukurasu,
            star_placement_puzzle,
            web_of_lies,
        ),
    )
}

#: Task key (family name or alias, e.g. SynLogic's ``mathador``) -> family.
TASKS: dict[str, Family] = {key: f for f in FAMILIES.values() for key in (f.name, *f.aliases)}


def get_family(task: str) -> Family:
    try:
        return TASKS[task]
    except KeyError:
        raise PuzzleDataError(
            f"unknown puzzle family {task!r}; known: {', '.join(sorted(TASKS))}"
        ) from None


def level(difficulty: int | str) -> int:
    """1, 2 or 3 from an int or "easy"/"medium"/"hard" (``ValueError`` otherwise)."""
    if isinstance(difficulty, str) and difficulty.strip().lower() in LEVEL_NAMES:
        return LEVEL_NAMES[difficulty.strip().lower()]
    if type(difficulty) is int and difficulty in (1, 2, 3):
        return difficulty
    raise ValueError(f"difficulty must be 1, 2, 3, 'easy', 'medium' or 'hard'; got {difficulty!r}")


def puzzle_rng(seed: int, family: str, difficulty: int, index: int) -> random.Random:
    """The generator's RNG for one puzzle: independent of which other puzzles are generated."""
    return random.Random(f"i3-logic:{seed}:{family}:{difficulty}:{index}")


def generate(family: str, seed: int, difficulty: int | str = 1, index: int = 0) -> Puzzle:
    fam = get_family(family)
    lvl = level(difficulty)
    return fam.generate(puzzle_rng(seed, fam.name, lvl, index), lvl)


def verify(puzzle: Puzzle, text: str) -> float:
    """Score ``text`` (a reply with reasoning already stripped) against ``puzzle``: 1.0 or 0.0.

    ``PuzzleDataError`` when the puzzle itself is broken (that is not the model's fault).
    """
    fam = get_family(puzzle.task)
    fam.check(puzzle)
    return float(fam.verify(puzzle, text or ""))


__all__ = [
    "FAMILIES",
    "TASKS",
    "Family",
    "PuzzleDataError",
    "generate",
    "get_family",
    "level",
    "verify",
]
