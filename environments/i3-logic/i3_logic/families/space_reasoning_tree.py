"""Space reasoning (tree): from facts about a tree of items, name all cousins of one item.

SynLogic's layout: the prompt states children, grandchildren, siblings and childless nodes of
a tree whose nodes are distinct items, and asks for the cousins of one item (children of its
parent's siblings), as a comma-separated list in alphabetical order in ``\\boxed{}``. The game
data's ``answer`` is that list (``"laptop, mug"``); ``metadata`` keeps only ``language``,
``max_num_nodes`` and ``min_num_nodes``, so the verifier reads ``answer``.

The reply's list must name exactly the cousins, each once: items separated by commas (also
``，``, ``、``, semicolons or one per line, or a list literal), any order (upstream compared
sets), case and runs of spaces ignored. Upstream deleted every space before comparing, so
``sunflowerseed`` passed for ``sunflower seed``; and it accepted an item named twice.
"""

from __future__ import annotations

import re

from i3_logic.answers import answer_block
from i3_logic.families.space_reasoning import normal
from i3_logic.puzzle import AnswerError, Puzzle, PuzzleDataError, parse_literal

NAME = "space_reasoning_tree"
ALIASES = ()
_SEPARATOR = re.compile(r"\s*(?:[,，、;；\n]\s*(?:and\s+)?|\s+and\s+)\s*", re.IGNORECASE)


def items_of(text: str) -> list[str] | None:
    """The normalised items of a written list, or None when it is not a clean list."""
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        try:
            value = parse_literal(text)
        except AnswerError:
            value = None
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            items = [normal(v) for v in value]
            return items if all(items) else None
        text = text[1:-1]
    items = [normal(part.strip("\"'`*")) for part in _SEPARATOR.split(text)]
    return items if items and all(items) else None


def expected(puzzle: Puzzle) -> frozenset[str]:
    items = items_of(str(puzzle.answer))
    if not items or len(set(items)) != len(items):
        raise PuzzleDataError(f"{NAME} answer must be a list of distinct items")
    return frozenset(items)


def check(puzzle: Puzzle) -> None:
    expected(puzzle)


def verify(puzzle: Puzzle, text: str) -> float:
    truth = expected(puzzle)
    items = items_of(answer_block(text))
    if items is None or len(set(items)) != len(items):
        return 0.0
    return 1.0 if frozenset(items) == truth else 0.0
