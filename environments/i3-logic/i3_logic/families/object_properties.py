"""Object properties: track a collection of items through transformations, then count matches.

SynLogic's layout: the prompt describes an initial collection of items with sizes, colours,
origins, materials and smells, a few changes (relatives add copies, items are lost or
repainted), and asks how many items now have any of several attributes; the answer goes in
``\\boxed{}``. The game data's ``answer`` is the count as a string; ``metadata`` keeps
``story``, ``question``, ``answer`` (the same string), ``initial_collection``,
``final_collection`` (item objects with ``sizes``, ``colors``, ``countries``, ``materials``,
``smells``, ``name``) and ``language``.

The reply's final answer block must be exactly that integer (read as in ``object_counting``).
Upstream took the last ``\\boxed{}`` only, cut at its first ``}``.
"""

from __future__ import annotations

from i3_logic.families.object_counting import score_int, stored_int
from i3_logic.puzzle import Puzzle, PuzzleDataError

NAME = "object_properties"
ALIASES = ()


def check(puzzle: Puzzle) -> None:
    value = stored_int(puzzle, NAME)
    meta = puzzle.metadata
    if "answer" in meta and str(meta["answer"]).strip() != str(value):
        raise PuzzleDataError(f"{NAME} metadata 'answer' disagrees with the stored answer")
    final = meta.get("final_collection")
    if final is not None and not (
        isinstance(final, list) and all(isinstance(item, dict) for item in final)
    ):
        raise PuzzleDataError(f"{NAME} metadata 'final_collection' must be a list of objects")


def verify(puzzle: Puzzle, text: str) -> float:
    return score_int(puzzle, text, NAME)
