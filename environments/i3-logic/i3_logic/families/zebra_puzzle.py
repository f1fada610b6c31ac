"""Zebra puzzles (logic grid puzzles from a corpus): the solution as a JSON object.

The row's ``answer`` is the solution as a JSON object (a string in the game data; an object
there is read too), e.g. ``{"header": ["House", "Name", ...], "rows": [["1", "Eric", ...],
...]}``. The prompt asks for the solution in a fenced ```` ```json ```` block in the same
layout; the last such block is read (else the final answer block of
``i3_logic.puzzle.final_answer``, else a reply that is a bare JSON object). It is parsed as
JSON, or as a Python literal by a literal-only parser (upstream ran ``eval`` on it), and must
equal the reference exactly: the same keys, list lengths and orders, and the same value types
(``"1"`` is not ``1``), as upstream's type-safe comparison. A reference that is not a JSON
object is compared as the exact string, as upstream.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from i3_logic.families.bbh_common import python_literal, require_answer
from i3_logic.puzzle import MAX_ANSWER_CHARS, AnswerError, Puzzle, PuzzleDataError, final_answer

NAME = "zebra_puzzle"
ALIASES = ()
#: A 6x6 puzzle pretty-printed with indentation runs past the common 4,000-character bound.
MAX_CHARS = 4 * MAX_ANSWER_CHARS
_JSON_FENCE = re.compile(r"```json[ \t]*\n?(.*?)```", re.DOTALL | re.IGNORECASE)


def structured(text: str, max_chars: int) -> Any:
    """JSON, else a Python literal (parsed, never evaluated); ``AnswerError`` if neither."""
    if len(text) > max_chars:
        raise AnswerError(f"answer longer than {max_chars} characters")
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return python_literal(text, max_chars)


def reply_block(text: str, opener: str) -> str:
    """The last ```` ```json ```` block, else the final answer block, else the whole reply when
    it is one bare value starting with ``opener`` (``{`` or ``[``); "" when there is none."""
    fences = _JSON_FENCE.findall(text or "")
    if fences:
        return fences[-1].strip()
    block = final_answer(text or "")
    if block:
        return block
    bare = (text or "").strip()
    closer = {"{": "}", "[": "]"}[opener]
    return bare if bare.startswith(opener) and bare.endswith(closer) else ""


def _reference(puzzle: Puzzle) -> Any:
    answer = require_answer(puzzle, NAME)
    try:
        value = structured(answer, 10 * MAX_CHARS)
    except AnswerError:
        return answer  # not JSON: upstream compares the exact string
    return value if isinstance(value, dict) else answer


def same(a: Any, b: Any) -> bool:
    """Deep equality with equal types at every level (upstream's ``type_safe=True``)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def check(puzzle: Puzzle) -> None:
    if not puzzle.answer.strip():
        raise PuzzleDataError(f"{NAME} row has no reference solution")
    _reference(puzzle)


def verify(puzzle: Puzzle, text: str) -> float:
    want = _reference(puzzle)
    block = reply_block(text, "{")
    if not block or len(block) > MAX_CHARS:
        return 0.0
    if isinstance(want, str):
        return 1.0 if block == want.strip() else 0.0
    given = structured(block, MAX_CHARS)
    return 1.0 if isinstance(given, dict) and same(want, given) else 0.0
