"""The table of puzzle families, one module each (SynLogic's task families).

A family module defines:

- ``NAME``: its SynLogic task key (``info["task"]`` of an INTELLECT-3-RL ``logic`` row);
- ``ALIASES``: other task keys upstream scores with the same verifier (e.g. ``mathador``);
- ``verify(puzzle, text) -> float``: 1.0 or 0.0 for a reply (reasoning already stripped); it
  may raise ``AnswerError`` for a missing or malformed answer, which `verify` below scores 0.0
  (decided here once, not in every family);
- ``check(puzzle)``: raises ``PuzzleDataError`` when a stored puzzle lacks the ground truth its
  verifier needs (metadata in SynLogic's layout);
- optionally ``generate(rng, difficulty) -> Puzzle``: a seeded generator (levels 1-3), for the
  families this package can also make puzzles for.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

from i3_logic.puzzle import AnswerError, Puzzle, PuzzleDataError

LEVEL_NAMES = {"easy": 1, "medium": 2, "hard": 3}


@dataclass(frozen=True, slots=True)
class Family:
    name: str
    aliases: tuple[str, ...]
    generate: Callable[[random.Random, int], Puzzle] | None
    verify: Callable[[Puzzle, str], float]
    check: Callable[[Puzzle], None]
    summary: str

    @classmethod
    def from_module(cls, module: ModuleType) -> Family:
        summary = (module.__doc__ or "").strip().splitlines()[0]
        return cls(
            module.NAME,
            tuple(module.ALIASES),
            getattr(module, "generate", None),
            module.verify,
            module.check,
            summary,
        )


# The family modules in table order (generated rows interleave in it), grouped by who
# maintains them.
_MODULE_NAMES = (
    # grids-a
    "sudoku",
    "futoshiki",
    "kukurasu",
    "arrow_maze",
    "calcudoko",
    "campsite",
    "norinori",
    # grids-b
    "minesweeper",
    "skyscraper_puzzle",
    "star_placement_puzzle",
    "number_wall",
    "numbrix",
    "survo",
    "wordscapes",
    # text-a
    "dyck_language",
    "word_sorting",
    "cipher",
    "dyck_language_errors",
    "dyck_language_reasoning_errors",
    "word_sorting_mistake",
    # text-b
    "game_of_24",
    "cryptarithm",
    "operation",
    "math_path",
    "goods_exchange",
    "time_sequence",
    # reasoning
    "boolean_expressions",
    "web_of_lies",
    "object_counting",
    "object_properties",
    "space_reasoning",
    "space_reasoning_tree",
    "buggy_tables",
    # corpus
    "zebra_puzzle",
    "arc_agi",
    "gpqa_diamond",
    "bbh_boolean_expressions",
    "bbh_causal_judgement",
    "bbh_date_understanding",
    "bbh_dyck_languages",
    "bbh_formal_fallacies",
    "bbh_multistep_arithmetic_two",
    "bbh_sports_understanding",
    "bbh_web_of_lies",
    "bbh_word_sorting",
    "bbeh",
)
_MODULES = tuple(importlib.import_module(f"{__name__}.{name}") for name in _MODULE_NAMES)

FAMILIES: dict[str, Family] = {f.name: f for f in map(Family.from_module, _MODULES)}

#: Families with a generator (``load_environment(source=None)`` can make their puzzles).
GENERATED: dict[str, Family] = {n: f for n, f in FAMILIES.items() if f.generate is not None}

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
    if fam.generate is None:
        raise PuzzleDataError(
            f"family {fam.name!r} has no generator (its puzzles come from loaded rows); "
            f"families with one: {', '.join(sorted(GENERATED))}"
        )
    return fam.generate(puzzle_rng(seed, fam.name, lvl, index), lvl)


def verify(puzzle: Puzzle, text: str) -> float:
    """Score ``text`` (a reply with reasoning already stripped) against ``puzzle``: 1.0 or 0.0.

    ``PuzzleDataError`` when the puzzle itself is broken (that is not the model's fault).
    """
    fam = get_family(puzzle.task)
    fam.check(puzzle)
    try:
        return float(fam.verify(puzzle, text or ""))
    except AnswerError:
        return 0.0  # the model's answer is missing or malformed: wrong, never an error


__all__ = [
    "FAMILIES",
    "GENERATED",
    "TASKS",
    "Family",
    "PuzzleDataError",
    "generate",
    "get_family",
    "level",
    "verify",
]
