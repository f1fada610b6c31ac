"""BBH multiple choice (date understanding and 16 more BBH tasks): one option letter, ``(A)``.

Upstream scores these 17 BIG-Bench Hard tasks with its date-understanding verifier: the row's
``answer`` is the option in parentheses (``(B)``) and the reply must state it, as in the BBH
prompts' "So the answer is (B).". Read with ``bbh_common.stated_answer``: the last
``<answer>``/``\\boxed{}`` or the line after the last "the answer is"; the block must name exactly
one option (``(B)``, ``B``, ``Option B``, or ``(B)`` followed by that option's own text).
Upstream took the first ``(X)`` after the first "the answer is", else the first ``(X)`` anywhere
in the reply, so "(A) or (B)" scored as (A).
"""

from __future__ import annotations

import re

from i3_logic.families.bbh_common import StatedAnswer, option_letter
from i3_logic.puzzle import Puzzle

NAME = "bbh_date_understanding"
ALIASES = tuple(
    f"bbh_{name}"
    for name in (
        "disambiguation_qa geometric_shapes hyperbaton logical_deduction_five_objects "
        "logical_deduction_seven_objects logical_deduction_three_objects movie_recommendation "
        "penguins_in_a_table reasoning_about_colored_objects ruin_names "
        "salient_translation_error_detection snarks temporal_sequences "
        "tracking_shuffled_objects_five_objects tracking_shuffled_objects_seven_objects "
        "tracking_shuffled_objects_three_objects"
    ).split()
)

_REFERENCE = re.compile(r"\(?([A-Z])\)?")


def _reference_letter(answer: str) -> str | None:
    m = _REFERENCE.fullmatch(answer)
    return m.group(1) if m else None


def _matches(puzzle: Puzzle, want: str, block: str) -> bool:
    return option_letter(block, puzzle.question) == want


_TASK = StatedAnswer(_reference_letter, "an option like (A)", _matches)
check = _TASK.check
verify = _TASK.verify
