"""Cryptarithm: an addition in which every letter stands for a digit.

Different letters are different digits and no multi-letter word starts with zero. Level 1 adds
two 3-digit words, level 2 two 4-digit words, level 3 three words of 4-5 digits. Puzzles come
from real sums, so each has at least one solution. The answer is the addition written with
digits (``123 + 456 = 579``, or set out in columns with a rule above the sum), or the
letter-to-digit assignment itself (``A=1, B=2, ...``, every letter once), or both when they
agree; the verifier checks
that it spells the puzzle under one consistent letter-to-digit assignment and that the sum is
right, so any valid solution scores 1.
"""

from __future__ import annotations

import random
import re
import string

from i3_logic.answers import answer_block
from i3_logic.puzzle import (
    ANSWER_INSTRUCTION,
    AnswerError,
    Puzzle,
    PuzzleDataError,
    require,
)

NAME = "cryptarithm"
ALIASES = ()
LEVELS = {1: ((3, 3),), 2: ((4, 4),), 3: ((4, 5), (4, 5), (4, 5))}
# ASCII digits only: "١" (Arabic-Indic one) is not a second way to write 1 for another letter.
_EQUATION = re.compile(r"^\s*(\d+(?:\s*\+\s*\d+)+)\s*=\s*(\d+)\s*$", re.ASCII)
_COLUMN_LINE = re.compile(r"\+?\s*(\d+)", re.ASCII)
_RULE = re.compile(r"[-_=\u2014\u2013\u2500]+")
_MAPPING = re.compile(r"\b([A-Za-z])\s*(?:=|:|->|\u2192|=>)\s*(\d)\b", re.ASCII)
# What may stand between the pairs of an assignment (and around it, beside an addition).
_MAPPING_REST = re.compile(r"[,;()\[\]]")
_WORD_EQUATION = re.compile(r"^[A-Z]+(?: \+ [A-Z]+)+ = [A-Z]+$")


def generate(rng: random.Random, difficulty: int) -> Puzzle:
    spans = LEVELS[difficulty]
    if len(spans) == 1:
        spans = spans * 2
    while True:
        lengths = [rng.randint(*s) for s in spans]
        addends = [rng.randint(10 ** (k - 1), 10**k - 1) for k in lengths]
        total = sum(addends)
        digits = sorted(set("".join(map(str, [*addends, total]))))
        if len(digits) >= 5:
            break
    letters = rng.sample(string.ascii_uppercase, len(digits))
    code = dict(zip(digits, letters, strict=True))
    spell = lambda n: "".join(code[d] for d in str(n))  # noqa: E731
    words = [spell(a) for a in addends]
    result = spell(total)
    equation = " + ".join(words) + " = " + result
    solution = " + ".join(map(str, addends)) + f" = {total}"
    question = (
        "Solve the cryptarithm below. Each letter stands for one digit, different letters stand "
        "for different digits, and no number with more than one digit starts with 0.\n\n"
        f"{equation}\n\n"
        "The answer is the same addition written with digits, e.g. 12 + 34 = 46.\n"
        f"{ANSWER_INSTRUCTION}"
    )
    metadata = {"equation": equation, "solution": solution}
    return Puzzle(NAME, question, solution, difficulty, metadata)


def _words(puzzle: Puzzle) -> list[str]:
    (equation,) = require(puzzle.metadata, NAME, "equation")
    if not isinstance(equation, str) or not _WORD_EQUATION.match(equation):
        raise PuzzleDataError(f"{NAME} metadata 'equation' must look like 'AB + CD = EF'")
    left, right = equation.split(" = ")
    return [*left.split(" + "), right]


def check(puzzle: Puzzle) -> None:
    _words(puzzle)


def _numbers(answer: str, words: list[str]) -> list[str] | None:
    """The numbers (addends, then the sum) an answer writes; None when it writes none, or when
    it writes both an addition and an assignment that disagree."""
    text = answer.replace("$", "").replace("\\,", "")
    pairs = _MAPPING.findall(text)
    if not pairs:
        return _addition(text)
    # The assignment: every letter exactly once (a letter given twice is a hedge).
    letters = [letter.upper() for letter, _ in pairs]
    if len(set(letters)) != len(letters) or set(letters) != set("".join(words)):
        return None
    digit = {letter.upper(): d for letter, d in pairs}
    mapped = ["".join(digit[ch] for ch in word) for word in words]
    rest = _MAPPING_REST.sub(" ", _MAPPING.sub(" ", text)).strip(" .\n")
    if not rest:
        return mapped
    return mapped if _addition(rest) == mapped else None  # both written: they must agree


def _addition(text: str) -> list[str] | None:
    """``a + b = c`` on one line, or set out in columns with a rule above the sum."""
    m = _EQUATION.match(text)
    if m:
        return [s.strip() for s in m.group(1).split("+")] + [m.group(2)]
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if len(lines) >= 3 and _RULE.fullmatch(lines[-2]):
        addends = [_COLUMN_LINE.fullmatch(ln) for ln in lines[:-2]]
        if all(addends) and lines[-1].isascii() and lines[-1].isdigit():
            return [m.group(1) for m in addends if m] + [lines[-1]]
    return None


def verify(puzzle: Puzzle, text: str) -> float:
    words = _words(puzzle)
    try:
        numbers = _numbers(answer_block(text), words)
    except AnswerError:
        return 0.0
    if numbers is None or len(numbers) != len(words):
        return 0.0
    assignment: dict[str, str] = {}
    for word, number in zip(words, numbers, strict=True):
        if len(word) != len(number) or (len(number) > 1 and number[0] == "0"):
            return 0.0
        for letter, digit in zip(word, number, strict=True):
            if assignment.setdefault(letter, digit) != digit:
                return 0.0
    if len(set(assignment.values())) != len(assignment):
        return 0.0
    return 1.0 if sum(int(n) for n in numbers[:-1]) == int(numbers[-1]) else 0.0
