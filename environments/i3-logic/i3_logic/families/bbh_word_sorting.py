"""BBH word sorting: the words of the prompt's ``List:`` in alphabetical order.

The row's ``answer`` is the sorted words separated by spaces. The reply states the list ("So
the answer is apple banana cherry.", or in ``<answer>``/``\\boxed{}``), separated by spaces,
commas or one per line, as read by ``i3_logic.answers.list_items``; it must be exactly the
reference list (case-insensitive). Upstream picked, from the whole reply if needed, every
occurrence of a listed word and kept each word's last position, so prose mentioning the words
could score; upstream also scored 0 for every row whose prompt lacks "List:".
"""

from __future__ import annotations

from i3_logic.answers import list_items
from i3_logic.families.bbh_common import require_answer, stated_answer
from i3_logic.puzzle import Puzzle

NAME = "bbh_word_sorting"
ALIASES = ()


def check(puzzle: Puzzle) -> None:
    require_answer(puzzle, puzzle.task)


def verify(puzzle: Puzzle, text: str) -> float:
    want = require_answer(puzzle, puzzle.task).lower().split()
    given = [w.lower() for w in list_items(stated_answer(text))]
    return 1.0 if given == want else 0.0
