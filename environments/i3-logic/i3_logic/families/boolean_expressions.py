"""Boolean expressions: pick out which of several labelled Boolean expressions are true.

SynLogic's layout: the prompt lists options ``A. <expression>``, ``B. ...`` (Python-style
``not``/``and``/``or`` over ``True``/``False``, arithmetic comparisons and, upstream, factual
statements) and asks for every true option's label, comma-separated, in ``\\boxed{}``. The game
data's ``answer`` holds the labels of the true options (``"A,C"``, sorted); upstream stores no
metadata (``null``), so the verifier reads only ``answer``.

The reply's labels must be exactly the true set: each label once, any order and case,
separated by commas, spaces or semicolons (or a list literal). Upstream compared the *set of
letters* anywhere in the boxed text, so ``\\boxed{A, A}`` or ``\\boxed{CA}`` passed for
``A,C``; here every item must be one distinct option label.

Generated puzzles (levels 1-3: nesting depth 2 / 3 / 4, 3 / 4 / 5-6 options) use the same
layout and also keep the option expressions in ``metadata["expressions"]`` (informational:
real rows lack it and the verifier never reads it).
"""

from __future__ import annotations

import random
import re

from i3_logic.answers import answer_block, list_items
from i3_logic.puzzle import ANSWER_INSTRUCTION, Puzzle, PuzzleDataError

NAME = "boolean_expressions"
ALIASES = ()
LABELS = "ABCDEFGH"  # upstream's option labels (at most eight options)
LEVELS = {1: (2, 3, 3), 2: (3, 4, 4), 3: (4, 5, 6)}  # depth, fewest and most options
_LABEL = re.compile(r"[A-Ha-h]")


def labels_of(answer: str) -> frozenset[str]:
    """The option labels a stored answer names (``"A,C"`` -> {"A", "C"})."""
    items = [s.strip() for s in answer.split(",")]
    if not items or any(len(s) != 1 or s.upper() not in LABELS for s in items):
        raise PuzzleDataError(
            f"{NAME} answer must be comma-separated option labels A-H, got {answer!r}"
        )
    if len(set(items)) != len(items):
        raise PuzzleDataError(f"{NAME} answer names a label twice: {answer!r}")
    return frozenset(s.upper() for s in items)


def check(puzzle: Puzzle) -> None:
    labels_of(puzzle.answer)


def read_labels(block: str) -> frozenset[str] | None:
    """The distinct labels a reply names, or None when it is not a plain list of labels."""
    items = list_items(block.replace("，", ",").replace("、", ","))  # Chinese prompts' commas
    if not items or not all(_LABEL.fullmatch(i) for i in items):
        return None
    labels = [i.upper() for i in items]
    if len(set(labels)) != len(labels):
        return None  # a label named twice is not a clean answer
    return frozenset(labels)


def verify(puzzle: Puzzle, text: str) -> float:
    truth = labels_of(puzzle.answer)
    given = read_labels(answer_block(text))
    return 1.0 if given == truth else 0.0


# -- generator -----------------------------------------------------------------------------------
def _arith(rng: random.Random) -> tuple[str, int]:
    """A small integer expression (``+ - *`` only, so exact) and its value."""
    a, b = rng.randint(-12, 12), rng.randint(-12, 12)
    op = rng.choice("+-*")
    value = a + b if op == "+" else a - b if op == "-" else a * b
    return f"{a} {op} {b}", value


_COMPARE = {
    ">": lambda x, y: x > y,
    "<": lambda x, y: x < y,
    ">=": lambda x, y: x >= y,
    "<=": lambda x, y: x <= y,
    "==": lambda x, y: x == y,
    "!=": lambda x, y: x != y,
}


def _atom(rng: random.Random) -> tuple[str, bool]:
    if rng.random() < 0.5:
        value = rng.random() < 0.5
        return str(value), value
    (left, x), (right, y) = _arith(rng), _arith(rng)
    op = rng.choice(sorted(_COMPARE))
    return f"({left}) {op} ({right})", _COMPARE[op](x, y)


def _expr(rng: random.Random, depth: int) -> tuple[str, bool]:
    """An expression in upstream's shape: ``not (x)``, ``(x) and (y)``, ``(x) or (y) or (z)``."""
    if depth <= 0 or (depth <= 2 and rng.random() < 0.3):
        return _atom(rng)
    roll = rng.random()
    if roll < 0.35:
        inner, value = _expr(rng, depth - 1)
        times = rng.randint(1, 3)
        return "not " * times + f"({inner})", value if times % 2 == 0 else not value
    parts = [_expr(rng, depth - 1), _expr(rng, depth - 1)]
    if depth > 2 and rng.random() < 0.4:
        parts.insert(1, _expr(rng, depth - 2))
    op = "and" if roll < 0.7 else "or"
    values = [v for _, v in parts]
    text = f" {op} ".join(f"({t})" for t, _ in parts)
    return text, all(values) if op == "and" else any(values)


def generate(rng: random.Random, difficulty: int) -> Puzzle:
    depth, low, high = LEVELS[difficulty]
    while True:
        options = [_expr(rng, depth) for _ in range(rng.randint(low, high))]
        truths = [v for _, v in options]
        # Upstream requires at least one true option; a nothing-false set is no puzzle either.
        if any(truths) and not all(truths) and all(len(t) <= 500 for t, _ in options):
            break
    listing = "\n".join(f"{LABELS[i]}. {t}" for i, (t, _) in enumerate(options))
    answer = ",".join(LABELS[i] for i, v in enumerate(truths) if v)
    question = (
        "Here is a Boolean logic problem. Each option is a Python-style Boolean expression "
        "(`not` binds tighter than `and`, which binds tighter than `or`).\n\n"
        f"Evaluate the following expressions and select the ones that are true:\n\n{listing}\n\n"
        "Which options are true? List the labels of all true options, separated by commas "
        f"(for example A,C).\n{ANSWER_INSTRUCTION}"
    )
    metadata = {"expressions": [t for t, _ in options]}
    return Puzzle(NAME, question, answer, difficulty, metadata)
