"""Shared reading of the corpus tasks' answers (not a family; BBH, BBEH, GPQA, zebra, ARC use it).

BBH prompts end with worked examples whose last sentence is "So the answer is X."; upstream's
BBH verifiers take the text after the *first* "the answer is" in the reply and, failing that,
the first matching word anywhere in it (so a reply that mentions "(A)" early in its reasoning
or lists every option scores on whatever comes first). Here the answer is, in order: the last
``<answer>...</answer>`` or ``\\boxed{}`` (the forms the other SynLogic prompts ask for), else the
line after the **last** "the answer is" (the reply's final statement). Nothing else in the reply
is searched, and the families then require the block to be exactly one answer.

``python_literal`` reads the JSON / Python literals the zebra, ARC and BBEH prompts ask for
(upstream ran ``eval`` on them): an ``ast`` walk that accepts constants, lists, tuples and
dicts only, with bounded depth and size.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from i3_logic.answers import clean
from i3_logic.puzzle import MAX_ANSWER_CHARS, AnswerError, Puzzle, PuzzleDataError, final_answer

__all__ = [
    "StatedAnswer",
    "WordChoice",
    "choice_answer",
    "integer",
    "option_letter",
    "options",
    "parsed_reference",
    "python_literal",
    "require_answer",
    "stated_answer",
]

T = TypeVar("T")

_TAG_OR_BOX = re.compile(r"<answer>.*?</answer>|\\boxed\{", re.IGNORECASE | re.DOTALL)
_CONTINUED = re.compile(r"(?:or|and)\b", re.IGNORECASE)  # "(A)\nor (B)": a hedge
_STATEMENT = re.compile(r"\bthe\s+(?:final\s+|correct\s+)?answer\s+is\b\s*:?", re.IGNORECASE)


def stated_answer(text: str | None) -> str:
    """The reply's final answer, cleaned (see the module docstring); ``AnswerError`` if none."""
    text = text or ""
    if _TAG_OR_BOX.search(text):
        block = final_answer(text)
    else:
        matches = list(_STATEMENT.finditer(text))
        if not matches:
            raise AnswerError("no 'the answer is' statement, <answer> tag or \\boxed{}")
        rest = text[matches[-1].end() :].lstrip()
        # The statement's own line ("The answer is:" followed by the answer on the next line
        # reads the next line): explanations on later lines are not part of the answer.
        block, _, after = rest.partition("\n")
        if _CONTINUED.match(after.lstrip()):
            raise AnswerError("the stated answer continues with an alternative")
        # "**So the answer is (A).**": markdown emphasis around the sentence, not the answer
        # (no BBH answer contains an asterisk).
        block = block.replace("*", "")
    if len(block) > MAX_ANSWER_CHARS:
        raise AnswerError(f"answer longer than {MAX_ANSWER_CHARS} characters")
    block = clean(block)
    if not block:
        raise AnswerError("empty answer")
    return block


def choice_answer(text: str | None, words: dict[str, str]) -> str | None:
    """The canonical value (``words[w]``) of the one answer word or phrase the reply states,
    case-insensitive; None for anything else (a hedge, an explanation, another word)."""
    try:
        block = stated_answer(text)
    except AnswerError:
        return None
    key = " ".join(block.strip(" .!*`_").lower().split())
    return words.get(key)


class WordChoice:
    """A task answered with one of a few words (yes/no, true/false, valid/invalid): the
    ``check`` and ``verify`` of its family module. ``words`` maps each accepted spelling (lower
    case) to the answer it gives; a row's reference answer must be one of those answers."""

    def __init__(self, words: dict[str, str]) -> None:
        self.words = words
        self.answers = set(words.values())

    def reference(self, puzzle: Puzzle) -> str:
        return require_answer(puzzle, puzzle.task, self.answers).lower()

    def check(self, puzzle: Puzzle) -> None:
        self.reference(puzzle)

    def verify(self, puzzle: Puzzle, text: str) -> float:
        return 1.0 if choice_answer(text, self.words) == self.reference(puzzle) else 0.0


_OPTION_LINE = re.compile(r"^\s*\(?([A-Z])[).:]\s+(\S.*?)\s*$", re.MULTILINE)


def options(question: str) -> dict[str, str]:
    """Option letter -> option text from a prompt's ``(A) text`` / ``A) text`` lines."""
    found: dict[str, str] = {}
    for m in _OPTION_LINE.finditer(question):
        found.setdefault(m.group(1), m.group(2))
    return found


def _norm(text: str) -> str:
    # Spacing after commas is dropped on both sides (BBEH's normalisation removes it).
    return " ".join(clean(text).lower().split()).replace(", ", ",").rstrip(".")


_LETTER = re.compile(r"(?:option\s+)?\(?([A-Za-z])\)?", re.IGNORECASE)
_LETTER_WITH_TEXT = re.compile(r"(?:option\s+)?\(?([A-Z])[).:]\s*(\S.*)", re.IGNORECASE | re.DOTALL)


def option_letter(block: str, question: str) -> str | None:
    """The option letter (upper-case) a block names, or None.

    ``(B)``, ``B``, ``Option B`` name B; ``(B) 01/02/2020`` names B only when the text is the
    prompt's own text for option B (so ``(A) or (B)`` and ``(B), not (A)`` name nothing).
    """
    block = block.strip()
    m = _LETTER.fullmatch(block)
    if m:
        return m.group(1).upper()
    m = _LETTER_WITH_TEXT.fullmatch(block)
    if m:
        letter = m.group(1).upper()
        text = options(question).get(letter)
        if text is not None and _norm(m.group(2)) == _norm(text):
            return letter
    return None


_INTEGER = re.compile(r"[+\-\u2212]?(?:\d{1,3}(?:,\d{3})+|\d{1,30})")


def integer(block: str) -> int | None:
    """The integer a block consists of (``-42``, ``\u221242``, ``1,024``); None otherwise."""
    text = block.strip().rstrip(".").strip()
    if not _INTEGER.fullmatch(text):
        return None
    return int(text.replace("\u2212", "-").replace(",", ""))


def require_answer(puzzle: Puzzle, task: str, allowed: set[str] | None = None) -> str:
    """The row's reference ``answer`` (stripped); ``PuzzleDataError`` if it is empty or, with
    ``allowed``, not one of those values (compared case-insensitively)."""
    answer = puzzle.answer.strip()
    if not answer:
        raise PuzzleDataError(f"{task} row has no reference answer")
    if allowed is not None and answer.lower() not in allowed:
        raise PuzzleDataError(
            f"{task} reference answer must be one of {', '.join(sorted(allowed))}; got {answer!r}"
        )
    return answer


def parsed_reference(puzzle: Puzzle, parse: Callable[[str], T | None], what: str) -> T:
    """The row's reference ``answer`` read by `parse`; ``PuzzleDataError`` saying it must be
    `what` when it is empty or `parse` gives None or raises ``AnswerError``."""
    answer = require_answer(puzzle, puzzle.task)
    try:
        value = parse(answer)
    except AnswerError:
        value = None
    if value is None:
        raise PuzzleDataError(f"{puzzle.task} reference answer must be {what}; got {answer!r}")
    return value


class StatedAnswer(Generic[T]):
    """A task whose reply states one answer (`stated_answer`) graded against the row's reference
    answer: the ``check`` and ``verify`` of its family module. `reference` reads the row's
    answer (None or ``AnswerError``: the row is broken, its answer must be `what`);
    `matches(puzzle, want, block)` says whether the stated block is that answer."""

    def __init__(
        self,
        reference: Callable[[str], T | None],
        what: str,
        matches: Callable[[Puzzle, T, str], bool],
    ) -> None:
        self.reference = reference
        self.what = what
        self.matches = matches

    def check(self, puzzle: Puzzle) -> None:
        parsed_reference(puzzle, self.reference, self.what)

    def verify(self, puzzle: Puzzle, text: str) -> float:
        want = parsed_reference(puzzle, self.reference, self.what)
        return 1.0 if self.matches(puzzle, want, stated_answer(text)) else 0.0


_MAX_DEPTH = 8
_MAX_NODES = 20000


def python_literal(text: str, max_chars: int = MAX_ANSWER_CHARS) -> Any:
    """A literal of str/int/float/bool/None, lists, tuples (as lists) and dicts, parsed
    without evaluating anything; ``AnswerError`` for any other syntax or when too large."""
    if len(text) > max_chars:
        raise AnswerError(f"answer longer than {max_chars} characters")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        raise AnswerError(f"not a literal: {type(e).__name__}") from None
    budget = [_MAX_NODES]
    return _walk(tree.body, 0, budget)


def _walk(node: ast.AST, depth: int, budget: list[int]) -> Any:
    budget[0] -= 1
    if depth > _MAX_DEPTH or budget[0] < 0:
        raise AnswerError("literal too deep or too large")
    if isinstance(node, ast.Constant) and (
        node.value is None or isinstance(node.value, str | int | float)
    ):
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub | ast.UAdd)
        and isinstance(node.operand, ast.Constant)
        and isinstance(node.operand.value, int | float)
        and not isinstance(node.operand.value, bool)
    ):
        value = node.operand.value
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.List | ast.Tuple):
        return [_walk(e, depth + 1, budget) for e in node.elts]
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise AnswerError("dict unpacking is not a literal")
        keys = [_walk(k, depth + 1, budget) for k in node.keys if k is not None]
        if any(isinstance(k, list | dict) for k in keys):
            raise AnswerError("unhashable dict key")
        return dict(zip(keys, (_walk(v, depth + 1, budget) for v in node.values), strict=True))
    raise AnswerError(f"unexpected {type(node).__name__} in answer")
