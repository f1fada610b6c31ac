"""BIG-Bench Extra Hard (all 23 ``bbeh_*`` tasks, one verifier): a short answer string.

The row's ``answer`` is the reference string (an option such as ``(A)``, a number, a word or
phrase, a list such as ``[1, 2]``). The prompt asks for the final answer in a fenced
```` ```python ```` block; the last such block is read (else the final answer block of
``i3_logic.puzzle.final_answer``: ``<answer>``, ``\\boxed{}``, another fence, "The answer is").
A Python literal in it (a string, a number, a list) is read as upstream's ``eval`` read it,
by a literal-only parser; anything else is taken as written. The answer is lower-cased, ``**``
and a trailing period dropped, and compared with upstream's fuzzy rules: equal; the same
option letter (``(b)``, ``b``, a ``(b) text`` reference; a ``(b) text`` answer only with
option B's own text from the prompt); lists equal without brackets, spaces and quotes; numbers
equal by value; equal without spaces or without quotes; one side the other in brackets; a
trailing ``?`` dropped.

Stricter than upstream: an answer of several lines scores 0 (upstream kept the first line, so
"(a)\\n(b)" matched (a)); the option rule needs a letter answer (upstream compared the second
character of any prediction with a ``(x)`` reference, so ``ca`` matched ``(a)``, and any
``(x)...`` prediction matched a reference whose second character is ``x``).
"""

from __future__ import annotations

import re

from i3_logic.answers import clean, finite_number
from i3_logic.families.bbh_common import option_letter, python_literal, require_answer
from i3_logic.puzzle import MAX_ANSWER_CHARS, AnswerError, Puzzle, final_answer

NAME = "bbeh_boardgame_qa"
ALIASES = tuple(
    f"bbeh_{name}"
    for name in (
        "boolean_expressions buggy_tables causal_understanding disambiguation_qa "
        "dyck_languages geometric_shapes hyperbaton linguini movie_recommendation "
        "multistep_arithmetic nycc object_counting object_properties sarc_triples "
        "shuffled_objects spatial_reasoning sportqa temporal_sequence time_arithmetic web_of_lies "
        "word_sorting zebra_puzzles"
    ).split()
)

_PYTHON_FENCE = re.compile(r"```python[ \t]*\n?(.*?)```", re.DOTALL | re.IGNORECASE)


def check(puzzle: Puzzle) -> None:
    require_answer(puzzle, puzzle.task)


def extract(text: str) -> str | None:
    """The reply's answer as upstream normalised it (lower case, ``**`` and a final period
    dropped); None when there is none, it is too long, or it spans several lines."""
    fences = _PYTHON_FENCE.findall(text or "")
    block = fences[-1].strip() if fences else final_answer(text or "")
    if not block or len(block) > MAX_ANSWER_CHARS:
        return None
    try:
        value = python_literal(block)
    except AnswerError:
        value = clean(block)  # written without quotes: (a), yes, a phrase
    else:
        if isinstance(value, dict):
            return None
        if value is None or isinstance(value, bool):
            value = block  # None / True written bare: the word itself
    answer = str(value).strip().lower().replace(", ", ",").replace("**", "").strip()
    if "\n" in answer or not answer:
        return None
    return answer[:-1].strip() if answer.endswith(".") else answer


# An option reference: "a", "(a)", or "(a) " followed by the option's text.
_LETTER = re.compile(r"([a-z])|\(([a-z])\)(?:\s.*)?", re.DOTALL)


def _bare(text: str) -> str:
    return text.replace(" ", "").replace("'", "").replace('"', "")


def matches(given: str, want: str, question: str = "") -> bool:
    """Upstream's fuzzy comparison of the normalised answer with the lower-cased reference."""
    want = want.strip().lower()
    given = given.strip()
    if given == want:
        return True
    ref_letter = _LETTER.fullmatch(want)
    if ref_letter:
        # An option answer: the same letter, or the letter with that option's own text.
        letter = option_letter(given, question)
        return letter is not None and letter.lower() == (ref_letter.group(1) or ref_letter.group(2))
    if want.startswith("[") and want.endswith("]"):
        inner = given[1:-1] if given.startswith("[") and given.endswith("]") else given
        return _bare(want[1:-1]) == _bare(inner)
    x, y = finite_number(given), finite_number(want)
    if x is not None and y is not None:
        return x == y
    if given.replace(" ", "") == want.replace(" ", ""):
        return True
    if given.replace("'", "") == want.replace("'", ""):
        return True
    if given == f"[{want}]" or want == f"[{given}]":
        return True
    return given.endswith("?") and given[:-1] == want


def verify(puzzle: Puzzle, text: str) -> float:
    want = require_answer(puzzle, puzzle.task)
    given = extract(text)
    return 1.0 if given is not None and matches(given, want, puzzle.question) else 0.0
