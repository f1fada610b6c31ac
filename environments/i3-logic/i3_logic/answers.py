"""Reading an answer block the ways a correct answer is commonly written, once for every family.

A model that has solved a puzzle writes the answer in many harmless forms: wrapped in
``$...$``, ``\\boxed{}``, ``\\text{}``, bold or backticks, in quotes, with a trailing period or an
"Answer:" label, inside a code fence; lists as ``a b``, ``a, b``, ``[a, b]``, ``["a", "b"]`` or
one item per (numbered) line; grid cells concatenated per row. These helpers strip and split
those forms and nothing else, so the family verifiers still see every candidate the model wrote:
an answer that hedges (two candidates, "X or Y", the right answer among wrong ones) keeps its
extra items and fails the family's exact check.
"""

from __future__ import annotations

import math
import re

from i3_logic.puzzle import (
    MAX_ANSWER_CHARS,
    AnswerError,
    answer_text,
    final_answer,
    parse_grid,
    parse_literal,
)

__all__ = [
    "answer_block",
    "answer_block_or_bare",
    "choice",
    "clean",
    "grid_answer_block",
    "int_grid_answer",
    "last_bracketed",
    "latex_brackets",
    "list_answer_block",
    "list_items",
    "parse_cells",
    "python_answer_block",
    "unbracketed_answer_block",
]

# Wrappers removed while the whole block is inside them (applied until nothing changes).
_FENCED = re.compile(r"^```[a-zA-Z0-9_+-]*[ \t]*\n?(.*?)\n?```$", re.DOTALL)
_MATH = (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]"))
_COMMAND = re.compile(r"^\\(?:boxed|text|textbf|textrm|mathrm|mathbf|texttt|fbox)\{")
_EMPHASIS = ("**", "__", "*", "_", "`")
_QUOTES = (('"', '"'), ("'", "'"), ("\u201c", "\u201d"), ("\u2018", "\u2019"))
# "Answer:", "Final answer:", "The answer is" (a colon or "is" is required, so a word list
# starting with the word "answer" is not mistaken for a label).
_LABEL = re.compile(r"^(?:the\s+)?(?:final\s+)?answer\s*(?:is\b\s*:?|:)\s*", re.IGNORECASE)


def finite_number(text: str) -> float | None:
    """`text` read as a finite number, else None ("nan", "inf" and words are not numbers)."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def answer_block(text: str | None) -> str:
    """The reply's final answer block (``answer_text``), cleaned; ``AnswerError`` if absent."""
    cleaned = clean(answer_text(text))
    if not cleaned:
        raise AnswerError("empty answer block")
    return cleaned


def answer_block_or_bare(text: str, bare: re.Pattern[str]) -> str:
    """The reply's final answer block, cleaned; or, when it has none, the whole reply if the
    whole reply is an answer of the form ``bare`` (the SynLogic prompts that ask for a
    bare answer with no tags). ``AnswerError`` otherwise: prose is never read as an answer.
    """
    if final_answer(text):
        return answer_block(text)
    whole = (text or "").strip()
    if whole and len(whole) <= MAX_ANSWER_CHARS and bare.fullmatch(whole):
        return clean(whole)
    raise AnswerError("no final answer block")


def list_answer_block(text: str | None) -> str:
    """``answer_block``; or, for a reply without a final answer block, the last top-level
    ``[...]`` in it (the SynLogic prompts for list and grid answers show only a bare list as
    the format). ``AnswerError`` when there is neither, or it is too long."""
    if final_answer(text or ""):
        return answer_block(text)
    text = text or ""
    if text.lower().rfind("<answer>") > text.lower().rfind("</answer>"):
        raise AnswerError("an <answer> tag is never closed")  # cut off: not a bare list
    end = text.rfind("]")
    depth = 0
    for i in range(end, -1, -1):
        depth += {"]": 1, "[": -1}.get(text[i], 0)
        if depth == 0:
            block = text[i : end + 1]
            if len(block) > MAX_ANSWER_CHARS:
                raise AnswerError(f"answer longer than {MAX_ANSWER_CHARS} characters")
            if _OFFERED_BESIDE.search(text[:i]):
                raise AnswerError("the list is offered as one of several candidates")
            return block
    raise AnswerError("no final answer block and no bracketed list")


_PYTHON_FENCE = re.compile(r"```python[ \t]*\n?(.*?)```", re.DOTALL | re.IGNORECASE)
_ANSWER_TAGS = re.compile(r"<answer>.*?</answer>", re.DOTALL | re.IGNORECASE)


def python_answer_block(text: str | None) -> str:
    """The last ```` ```python ```` block, the form many SynLogic prompts ask for, cleaned;
    unless the reply has ``<answer>`` tags, which are explicit and win; otherwise the common
    forms (``answer_block``). ``AnswerError`` when there is none, or it is empty or too long."""
    text = text or ""
    if not _ANSWER_TAGS.search(text):
        fences = _PYTHON_FENCE.findall(text)
        if fences:
            block = fences[-1].strip()
            if len(block) > MAX_ANSWER_CHARS:
                raise AnswerError(f"answer longer than {MAX_ANSWER_CHARS} characters")
            if not block:
                raise AnswerError("empty python block")
            return clean(block)
    return answer_block(text)


def last_bracketed(text: str, brackets: re.Pattern[str]) -> str | None:
    """What the last match of `brackets` encloses (its group 1, as written): the form the
    prompts that ask for ``[...]`` or ``[[...]]`` at the end of the reply read. None when the
    reply has ``<answer>`` tags (explicit: they win) or no match. ``AnswerError`` when another
    match ends on the last one's line (two candidates side by side: a hedge)."""
    if _ANSWER_TAGS.search(text):
        return None
    found = list(brackets.finditer(text))
    if not found:
        return None
    last = found[-1]
    line_start = text.rfind("\n", 0, last.start()) + 1
    if len(found) > 1 and found[-2].end() > line_start:
        raise AnswerError("two bracketed answers on one line")
    return last.group(1)


def int_grid_answer(text: str | None, rows: int, cols: int) -> list[list[int]]:
    """The reply's `rows` x `cols` integer grid: ``list_answer_block`` in any form of
    ``parse_grid``; ``AnswerError`` otherwise."""
    return parse_grid(list_answer_block(text), rows, cols)


def grid_answer_block(text: str | None) -> str:
    """``list_answer_block``, cleaned, without a leading ``grid = `` (a code block's
    assignment): the grid literal a reply gives."""
    block = clean(list_answer_block(text))
    if "=" in block.split("[", 1)[0]:
        block = block.split("=", 1)[1].strip()
    return block


def unbracketed_answer_block(text: str, brackets: re.Pattern[str]) -> str:
    """``answer_block``, or what it encloses (cleaned) when it is one whole `brackets` match."""
    block = answer_block(text)
    inner = brackets.fullmatch(block)
    return clean(inner.group(1)) if inner else block


# "[[...]] or [[...]]": the last list is one candidate, not the answer.
_OFFERED_BESIDE = re.compile(r"\b(?:or|either)\s*[:,]?\s*$", re.IGNORECASE)


def clean(block: str) -> str:
    """``block`` without the wrappers and decorations listed in the module docstring."""
    text = block.strip()
    while True:
        before = text
        fenced = _FENCED.match(text)
        if fenced:
            text = fenced.group(1).strip()
        for left, right in _MATH:
            if (
                len(text) > len(left) + len(right)
                and text.startswith(left)
                and text.endswith(right)
            ):
                text = text[len(left) : -len(right)].strip()
                break
        command = _COMMAND.match(text)
        if command:
            inner = _braced(text, command.end())
            if inner is not None:
                text = inner.strip()
        for mark in _EMPHASIS:
            if len(text) > 2 * len(mark) and text.startswith(mark) and text.endswith(mark):
                text = text[len(mark) : -len(mark)].strip()
                break
        for left, right in _QUOTES:
            inner = text[len(left) : -len(right)]
            if (
                len(text) > 2
                and text.startswith(left)
                and text.endswith(right)
                and left not in inner
                and right not in inner
            ):
                text = inner.strip()
                break
        text = _LABEL.sub("", text, count=1).strip()
        if text.endswith(".") and not text.endswith(".."):
            text = text[:-1].rstrip()
        if text == before:
            return text


def _braced(text: str, start: int) -> str | None:
    """The content up to the brace matching the one before ``start`` when it ends ``text``."""
    depth = 1
    i = start
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in "{}":
            i += 2  # an escaped brace is content
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[start:i] if i == len(text) - 1 else None
        i += 1
    return None


def choice(block: str, options: tuple[str, ...]) -> str | None:
    """The one option (lower-case) the block consists of, case-insensitive; None otherwise.

    ``True``, ``**true.**``, ``\\boxed{\\text{True}}``, ``Answer: True`` are "true"; ``True or
    False``, ``not True`` and ``True, False`` are None (not one answer).
    """
    text = clean(block).strip(" .!*`_").lower()
    return text if text in options else None


_ENUMERATOR = re.compile(r"^\s*(?:\d+\s*[.)]|[-*\u2022])\s+", re.MULTILINE)
_OXFORD_AND = re.compile(r",\s*and\s+", re.IGNORECASE)
_ITEM_SEPARATOR = re.compile(r"[\s,;<\u2192]+|->")


def list_items(block: str) -> list[str]:
    """The items of a written list: a list literal, or items separated by spaces, commas,
    semicolons, ``<`` or arrows, or one per line (numbered or bulleted); each item unquoted."""
    text = clean(block)
    if text.startswith("[") and text.endswith("]"):
        try:
            value = parse_literal(text)
        except AnswerError:
            value = None
        if isinstance(value, list) and all(isinstance(v, str | int) for v in value):
            return [str(v).strip() for v in value if str(v).strip()]
        text = text[1:-1]  # [a, b] with unquoted words
    text = _ENUMERATOR.sub("", text)
    text = _OXFORD_AND.sub(", ", text)
    items = (w.strip(".\"'`*\u201c\u201d\u2018\u2019") for w in _ITEM_SEPARATOR.split(text))
    return [w for w in items if w]


_LATEX_BRACKETS = (
    ("\\langle", "<"),
    ("\\rangle", ">"),
    ("\\lbrace", "{"),
    ("\\rbrace", "}"),
    ("\\lbrack", "["),
    ("\\rbrack", "]"),
    ("\\{", "{"),
    ("\\}", "}"),
    ("\\lt", "<"),
    ("\\gt", ">"),
    ("&lt;", "<"),
    ("&gt;", ">"),
    ("\\left", ""),
    ("\\right", ""),
    ("\u27e8", "<"),
    ("\u27e9", ">"),
)


def latex_brackets(text: str) -> str:
    """Brackets written as LaTeX or HTML (``\\}``, ``\\rangle``, ``&gt;``) as plain characters."""
    for written, plain in _LATEX_BRACKETS:
        text = text.replace(written, plain)
    return text


# A cell: (r, c), [r, c] or {r, c} with a comma or spaces between, or R1C2 / r1c2.
_PAIR = re.compile(
    r"[(\[{]\s*(\d+)\s*(?:,|\s)\s*(\d+)\s*[)\]}]|\b[rR](\d+)\s*[cC](\d+)\b", re.ASCII
)
_CELL_FILLER = re.compile(r"(?:[\s,;.\[\](){}]|\band\b)*", re.IGNORECASE)


def parse_cells(block: str) -> list[tuple[int, int]]:
    """``(row, column)`` pairs as written (from 1, in order, duplicates kept).

    ``AnswerError`` when the block holds anything besides the pairs, their brackets, commas,
    semicolons and "and" (a word such as "or" or "maybe" is a hedge, not an answer).
    """
    text = clean(block)
    pairs: list[tuple[int, int]] = []
    for m in _PAIR.finditer(text):
        r, c = (m.group(1), m.group(2)) if m.group(1) is not None else (m.group(3), m.group(4))
        pairs.append((int(r), int(c)))
    if not pairs or not _CELL_FILLER.fullmatch(_PAIR.sub(" ", text)):
        raise AnswerError("expected (row, column) pairs and nothing else")
    return pairs
