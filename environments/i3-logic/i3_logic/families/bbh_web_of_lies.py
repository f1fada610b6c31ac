"""BBH web of lies: does the last person asked tell the truth? ``Yes`` or ``No``.

The row's ``answer`` is ``Yes`` or ``No``. The reply states one of them, any case, optionally
restated about the person the prompt asks about ("No, Vina lies.", "Vina tells the truth"; the
person is taken from the prompt's "Does X tell the truth?"). Upstream searched "no" before "yes", after the first "the answer is" and then in the
whole reply, so a reply holding the word "no" anywhere scored as No; here exactly one answer
must be stated, and a restatement about someone else is not one.
"""

from __future__ import annotations

import re

from i3_logic.answers import choice
from i3_logic.families.bbh_common import require_answer, stated_answer
from i3_logic.puzzle import Puzzle

NAME = "bbh_web_of_lies"
ALIASES = ()
_ASKED = re.compile(r"Does\s+(\w+)\s+tell\s+the\s+truth\s*\?", re.IGNORECASE)
_HONEST = r"tells the truth|is telling the truth|is truthful|is honest"
_LIAR = r"lies|is lying|is a liar|does not tell the truth|doesn't tell the truth|is not truthful"


def reading(block: str, person: str | None) -> str | None:
    """ "yes" or "no" when the block is exactly one of them, optionally restated about
    ``person`` ("No, Vina lies."); None otherwise (a restatement that contradicts the Yes/No
    or names someone else is not an answer)."""
    plain = choice(block, ("yes", "no"))
    if plain is not None or person is None:
        return plain
    text = " ".join(block.strip(" .!*").lower().split())
    name = re.escape(person.lower())
    m = re.fullmatch(
        rf"(?:(yes|no)\s*[,.:;!-]\s*)?(?:(?:{name}|he|she|they)\s+)?({_HONEST}|{_LIAR})", text
    )
    if not m:
        return None
    stated = "yes" if re.fullmatch(_HONEST, m.group(2)) else "no"
    return stated if m.group(1) in (None, stated) else None


def check(puzzle: Puzzle) -> None:
    require_answer(puzzle, puzzle.task, {"yes", "no"})


def verify(puzzle: Puzzle, text: str) -> float:
    want = require_answer(puzzle, puzzle.task, {"yes", "no"}).lower()
    block = stated_answer(text)
    asked = _ASKED.findall(puzzle.question)
    given = reading(block, asked[-1] if asked else None)
    return 1.0 if given == want else 0.0
