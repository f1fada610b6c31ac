"""BBH Dyck languages: the closing brackets that complete a sequence (``] } ]``).

The row's ``answer`` is the completion, symbols separated by spaces. The reply states it
("So the answer is ] } ].", or in ``<answer>``/``\\boxed{}``); spaces, commas, quotes and
LaTeX/HTML spellings of brackets (``\\}``, ``\\rangle``, ``&gt;``) are read as brackets, and the whole
completed sequence (the prompt's ``Input:`` followed by the completion) is accepted too.
Upstream compared the text after the first "the answer is" with its last character dropped
(so an answer without a final period lost its last bracket) or, without such a statement, the
whole reply.
"""

from __future__ import annotations

import re

from i3_logic.answers import latex_brackets
from i3_logic.families.bbh_common import StatedAnswer
from i3_logic.puzzle import AnswerError, Puzzle

NAME = "bbh_dyck_languages"
ALIASES = ()
_INPUT = re.compile(r"^\s*Input:\s*(.+?)\s*$", re.MULTILINE | re.IGNORECASE)
_BRACKETS = set("()[]{}<>")


def symbols(text: str) -> list[str]:
    """The bracket symbols written (spaces, commas, quotes between them skipped);
    ``AnswerError`` when anything else is there (a word, a second candidate)."""
    found = [ch for ch in latex_brackets(text) if not (ch.isspace() or ch in ",'\"`*")]
    if not found or any(ch not in _BRACKETS for ch in found):
        raise AnswerError("not a bracket sequence")
    return found


def _matches(puzzle: Puzzle, want: list[str], block: str) -> bool:
    given = symbols(block)
    accepted = [want]
    prefix = _INPUT.findall(puzzle.question)
    if prefix:
        try:
            accepted.append(symbols(prefix[-1]) + want)
        except AnswerError:
            pass  # an Input: line that is not brackets: only the completion is accepted
    return given in accepted


_TASK = StatedAnswer(symbols, "closing brackets", _matches)
check = _TASK.check
verify = _TASK.verify
