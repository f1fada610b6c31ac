"""Space reasoning: walk a grid of items from a description of moves; name the item you reach.

SynLogic's layout: the prompt describes a square, triangular or diamond network whose vertices
each hold a distinct item, a walk ("You see a lamp, then 2 step(s) right, and you see a kite."),
possibly a jump to an unseen vertex, and asks which item a further sequence of moves reaches;
the answer, spelled exactly as the item is named in the prompt, goes in ``\\boxed{}``
(``unknown`` if there is none). The game data's ``answer`` is that item; ``metadata`` keeps
``shape``, ``language``, ``num_waypoints``, ``unknown_node_num`` and ``n`` (the layout itself
is not stored, so the verifier reads ``answer``).

The reply's final answer block must be the item's name: case and runs of spaces ignored (as
upstream ignored case), a leading article ("a lamp") allowed. Several names, or the name inside
a sentence, are not an answer.
"""

from __future__ import annotations

import re

from i3_logic.answers import answer_block
from i3_logic.puzzle import Puzzle, PuzzleDataError

NAME = "space_reasoning"
ALIASES = ()
_ARTICLE = re.compile(r"^(?:a|an|the)\s+", re.IGNORECASE)


def normal(name: str) -> str:
    """An item name compared case-insensitively, with runs of whitespace as one space."""
    return " ".join(name.split()).casefold()


def stored_item(puzzle: Puzzle, task: str) -> str:
    item = normal(str(puzzle.answer))
    if not item:
        raise PuzzleDataError(f"{task} puzzle has no stored answer")
    return item


def check(puzzle: Puzzle) -> None:
    stored_item(puzzle, NAME)


def verify(puzzle: Puzzle, text: str) -> float:
    truth = stored_item(puzzle, NAME)
    given = normal(answer_block(text))
    if given == truth:
        return 1.0
    # "a lamp" for "lamp" (the walk is told as "you see a lamp"), never for "a" + something.
    bare = _ARTICLE.sub("", given, count=1)
    return 1.0 if bare != given and bare == truth else 0.0
