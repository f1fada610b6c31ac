"""Cryptarithm: an equation in which every letter stands for a digit.

Different letters are different digits and no multi-digit number starts with zero. Metadata is
SynLogic's layout: ``letter_words`` (the operands, then the result), ``operators`` (one of
``+ - *`` between each pair of operands, ``*`` binding tighter), ``numbers``, ``digit_map``,
``num_letter``, ``operator_num``, ``operator_level``; ``answer`` is the equation in digits
(``123 + 456 = 579``). SynLogic's prompt asks for "The answer is <equation>" on the last line
(Chinese prompts: "答案是 <equation>").

The answer is the equation written with digits (``123 + 456 = 579``; an addition may also be set
out in columns with a rule above the sum), or the letter-to-digit assignment itself
(``A=1, B=2, ...``, every letter once), or both when they agree. The verifier checks that it
spells the puzzle under one consistent letter-to-digit assignment, with the puzzle's operators,
and that the equation holds, so any valid solution scores 1 (SynLogic's generator keeps only
puzzles with one solution, where this is its exact match with ``answer``).

Level 1 adds two 3-digit words, level 2 two 4-digit words, level 3 three words of 4-5 digits;
puzzles come from real sums, so each has at least one solution.
"""

from __future__ import annotations

import random
import re
import string

from i3_logic.answers import answer_block, clean
from i3_logic.puzzle import (
    ANSWER_INSTRUCTION,
    MAX_ANSWER_CHARS,
    AnswerError,
    Puzzle,
    PuzzleDataError,
    require,
    trace_id,
)

NAME = "cryptarithm"
ALIASES = ()
LEVELS = {1: ((3, 3),), 2: ((4, 4),), 3: ((4, 5), (4, 5), (4, 5))}
OPERATORS = ("+", "-", "*")
# ASCII digits only: "١" (Arabic-Indic one) is not a second way to write 1 for another letter.
_EQUATION = re.compile(r"^\s*(\d+)((?:\s*[-+*]\s*\d+)+)\s*=\s*(\d+)\s*$", re.ASCII)
_TERM = re.compile(r"\s*([-+*])\s*(\d+)", re.ASCII)
_COLUMN_LINE = re.compile(r"\+?\s*(\d+)", re.ASCII)
_RULE = re.compile(r"[-_=\u2014\u2013\u2500]+")
_MAPPING = re.compile(r"\b([A-Za-z])\s*(?:=|:|->|\u2192|=>)\s*(\d)\b", re.ASCII)
# What may stand between the pairs of an assignment (and around it, beside an equation).
_MAPPING_REST = re.compile(r"[,;()\[\]]")
_WORD = re.compile(r"[A-Z]+")
_SYMBOLS = str.maketrans({"\u00d7": "*", "\u2212": "-", "\u2013": "-", "\u00b7": "*"})
# The Chinese prompt's "答案是 $YOUR_ANSWER。" (also 答案为 / 答案：).
_CN_LABEL = re.compile(r"答案\s*(?:是|为)?\s*[：:]?")


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
    words = [spell(n) for n in [*addends, total]]
    operators = ["+"] * (len(addends) - 1)
    equation = " + ".join(words[:-1]) + " = " + words[-1]
    solution = " + ".join(map(str, addends)) + f" = {total}"
    question = (
        "Solve the cryptarithm below. Each letter stands for one digit, different letters stand "
        "for different digits, and no number with more than one digit starts with 0.\n\n"
        f"{equation}\n\n"
        "The answer is the same equation written with digits, e.g. 12 + 34 = 46.\n"
        f"{ANSWER_INSTRUCTION}"
    )
    metadata = {
        "trace_id": trace_id(rng),
        "numbers": [*addends, total],
        "letter_words": words,
        "operators": operators,
        "digit_map": {letter: int(d) for d, letter in code.items()},
        "num_letter": len(digits),
        "operator_num": len(operators),
        "operator_level": 1,
    }
    return Puzzle(NAME, question, solution, difficulty, metadata)


def _layout(puzzle: Puzzle) -> tuple[list[str], list[str]]:
    """``letter_words`` (operands then result) and ``operators``; ``PuzzleDataError`` if bad."""
    words, ops = require(puzzle.metadata, NAME, "letter_words", "operators")
    if (
        not isinstance(words, list)
        or len(words) < 3
        or not all(isinstance(w, str) and _WORD.fullmatch(w) for w in words)
    ):
        raise PuzzleDataError(
            f"{NAME} metadata 'letter_words' must be 3 or more upper-case words (operands, result)"
        )
    if not isinstance(ops, list) or len(ops) != len(words) - 2 or not set(ops) <= set(OPERATORS):
        raise PuzzleDataError(
            f"{NAME} metadata 'operators' must hold one of + - * between each pair of operands"
        )
    if len(set("".join(words))) > 10:
        raise PuzzleDataError(f"{NAME} puzzle has more than 10 distinct letters")
    return words, ops


def check(puzzle: Puzzle) -> None:
    _layout(puzzle)


def value(numbers: list[int], ops: list[str]) -> int:
    """``numbers[0] ops[0] numbers[1] ...`` with ``*`` before ``+``/``-`` (left to right)."""
    terms, signs = [numbers[0]], []
    for op, n in zip(ops, numbers[1:], strict=True):
        if op == "*":
            terms[-1] *= n
        else:
            terms.append(n)
            signs.append(op)
    total = terms[0]
    for sign, term in zip(signs, terms[1:], strict=True):
        total = total + term if sign == "+" else total - term
    return total


def _block(text: str) -> str:
    """The answer block; for a Chinese reply without one, the text after the last 答案是."""
    try:
        return answer_block(text)
    except AnswerError:
        labels = list(_CN_LABEL.finditer(text))
        if not labels:
            raise
        block = clean(text[labels[-1].end() :].strip().rstrip("。.").strip())
        if not block or len(block) > MAX_ANSWER_CHARS:
            raise AnswerError("no answer after 答案是") from None
        return block


def _written(answer: str, words: list[str], ops: list[str]) -> list[str] | None:
    """The numbers (operands, then the result) an answer writes; None when it writes none,
    uses other operators than the puzzle, or writes an equation and an assignment that
    disagree."""
    text = answer.replace("$", "").replace("\\,", "").replace("\\times", "*")
    text = text.translate(_SYMBOLS).rstrip("。")
    pairs = _MAPPING.findall(text)
    if not pairs:
        return _equation(text, ops)
    # The assignment: every letter exactly once (a letter given twice is a hedge).
    letters = [letter.upper() for letter, _ in pairs]
    if len(set(letters)) != len(letters) or set(letters) != set("".join(words)):
        return None
    digit = {letter.upper(): d for letter, d in pairs}
    mapped = ["".join(digit[ch] for ch in word) for word in words]
    rest = _MAPPING_REST.sub(" ", _MAPPING.sub(" ", text)).strip(" .\n")
    if not rest:
        return mapped
    return mapped if _equation(rest, ops) == mapped else None  # both written: they must agree


def _equation(text: str, ops: list[str]) -> list[str] | None:
    """``a + b = c`` on one line (the puzzle's operators, in order), or an addition set out in
    columns with a rule above the sum."""
    m = _EQUATION.match(text)
    if m:
        terms = _TERM.findall(m.group(2))
        if [op for op, _ in terms] != ops:
            return None
        return [m.group(1), *(n for _, n in terms), m.group(3)]
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if set(ops) == {"+"} and len(lines) >= 3 and _RULE.fullmatch(lines[-2]):
        addends = [_COLUMN_LINE.fullmatch(ln) for ln in lines[:-2]]
        if all(addends) and lines[-1].isascii() and lines[-1].isdigit():
            return [m.group(1) for m in addends if m] + [lines[-1]]
    return None


def verify(puzzle: Puzzle, text: str) -> float:
    words, ops = _layout(puzzle)
    numbers = _written(_block(text), words, ops)
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
    ints = [int(n) for n in numbers]
    return 1.0 if value(ints[:-1], ops) == ints[-1] else 0.0
