"""Goods exchange (SynLogic): who owns which item after a series of swaps.

Each person owns one item; a list of exchanges follows (two people swap, the owners of two
items swap, someone trades one item for another, a three-way rotation, and distractors that
change nothing). Metadata is SynLogic's layout: ``names``, ``objects``, ``owns_before`` (person
-> item), ``operations`` (the sentences), ``owns_after`` (the final ownership written as a
Python tuple of pairs, ``(('Alice','red book'),('Bob','blue watch'))``, also the row's
``answer``), ``num_people``, ``operator_num``, ``is_chinese``. The prompt asks for that tuple in
a final ```` ```python ```` block.

The answer is the last ```` ```python ```` block (unless the reply has ``<answer>`` tags; without
either, the common answer forms): a tuple or list of ``(person, item)`` pairs, quoted or not.
It must name every person exactly once with their final item (case and surrounding spaces
ignored, as upstream). A person named twice is not an answer (upstream kept the last pair).
The tuple is read by a literal-only parser, never evaluated as code (upstream used ``eval``).
"""

from __future__ import annotations

import re
from typing import Any

from i3_logic.answers import python_answer_block
from i3_logic.puzzle import (
    MAX_ANSWER_CHARS,
    AnswerError,
    Puzzle,
    PuzzleDataError,
    parse_literal,
    require,
)

NAME = "goods_exchange"
ALIASES = ()
# An unquoted pair, "(Alice, red book)": two parts without brackets, commas or quotes.
_BARE_PAIR = re.compile(r"\(\s*([^(),'\"]+?)\s*,\s*([^(),'\"]+?)\s*\)")
_BARE_FILLER = re.compile(r"[\s,()\[\]]*")


def _key(text: str) -> str:
    return " ".join(text.split()).casefold()


def _pairs(value: Any) -> list[tuple[str, str]] | None:
    """``value`` (a parsed literal) as (person, item) pairs; None if it is not a list of pairs."""
    if not isinstance(value, list) or not value:
        return None
    pairs = []
    for pair in value:
        if not isinstance(pair, list) or len(pair) != 2:
            return None
        if not all(isinstance(v, str) and v.strip() for v in pair):
            return None
        pairs.append((pair[0].strip(), pair[1].strip()))
    return pairs


def _owns_after(puzzle: Puzzle) -> dict[str, str]:
    """The final ownership (case-folded person -> case-folded item); ``PuzzleDataError``."""
    (after,) = require(puzzle.metadata, NAME, "owns_after")
    pairs = None
    if isinstance(after, str) and len(after) <= 100 * MAX_ANSWER_CHARS:
        try:
            pairs = _pairs(parse_literal(after))
        except AnswerError:
            # SynLogic writes "('{person}','{item}')" joined by ","; a name with an apostrophe
            # ("O'Neil") breaks the literal but not that layout.
            inner = after.strip()
            if inner.startswith("(('") and inner.endswith("'))"):
                parts = [p.split("','") for p in inner[3:-3].split("'),('")]
                if all(len(p) == 2 for p in parts):
                    pairs = [(a.strip(), b.strip()) for a, b in parts]
    if not pairs:
        raise PuzzleDataError(f"{NAME} metadata 'owns_after' must be a tuple of (person, item)")
    owners = {_key(p): _key(i) for p, i in pairs}
    if len(owners) != len(pairs):
        raise PuzzleDataError(f"{NAME} metadata 'owns_after' names a person twice")
    names = puzzle.metadata.get("names")
    if isinstance(names, list) and {_key(str(n)) for n in names} != set(owners):
        raise PuzzleDataError(f"{NAME} metadata 'owns_after' does not name exactly 'names'")
    return owners


def check(puzzle: Puzzle) -> None:
    _owns_after(puzzle)


def written_pairs(block: str) -> list[tuple[str, str]] | None:
    """The (person, item) pairs of an answer: a tuple/list literal, or unquoted pairs
    ``(Alice, red book), (Bob, blue hat)`` with only brackets and commas around them."""
    text = block.strip().rstrip(";")
    try:
        return _pairs(parse_literal(text))
    except AnswerError:
        pass
    found = _BARE_PAIR.findall(text)
    if found and _BARE_FILLER.fullmatch(_BARE_PAIR.sub(" ", text)):
        return [(a.strip(), b.strip()) for a, b in found]
    return None


def verify(puzzle: Puzzle, text: str) -> float:
    owners = _owns_after(puzzle)
    pairs = written_pairs(python_answer_block(text))
    if pairs is None or len(pairs) != len(owners):
        return 0.0
    said = {_key(p): _key(i) for p, i in pairs}
    if len(said) != len(pairs):
        return 0.0  # a person named twice
    return 1.0 if said == owners else 0.0
