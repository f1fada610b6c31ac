"""The puzzle record, answer extraction and the safe parsers every family shares.

A puzzle is stored the way SynLogic stores one (``game_data_str`` in the INTELLECT-3-RL
``logic`` rows): ``{"question", "answer", "difficulty", "metadata"}``. ``metadata`` holds the
ground truth a verifier checks against; ``answer`` is one reference solution (the text a correct
model would put in its answer block).

Nothing here evaluates model output as code: structured answers are parsed with ``ast.parse``
and a walker that accepts only literals (numbers, strings, lists, tuples).
"""

from __future__ import annotations

import ast
import random
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

import orjson

import verifiers as vf

__all__ = [
    "ANSWER_INSTRUCTION",
    "MAX_ANSWER_CHARS",
    "AnswerError",
    "Puzzle",
    "PuzzleDataError",
    "answer_text",
    "final_answer",
    "format_grid",
    "int_grid",
    "is_latin",
    "literal_grid",
    "parse_grid",
    "parse_literal",
    "random_latin_square",
    "require",
    "strip_think",
]

#: Longest answer block a verifier will parse; longer answers score 0.
MAX_ANSWER_CHARS = 4000

ANSWER_INSTRUCTION = (
    "Write your final answer inside <answer></answer> tags at the end of your reply."
)
#: `ANSWER_INSTRUCTION` starting in lower case, for inside a sentence (the alternative to a
#: family's own answer format): ``(Or: write your final answer ...)``.
ANSWER_INSTRUCTION_LOWER = ANSWER_INSTRUCTION[0].lower() + ANSWER_INSTRUCTION[1:]


def trace_id(rng: random.Random, version: int | None = 4) -> str:
    """A puzzle's ``trace_id`` drawn from its seeded `rng` (same seed, same id): uuid4-shaped,
    or with ``version=None`` the 128 bits as drawn (the families that always wrote them so)."""
    return str(uuid.UUID(int=rng.getrandbits(128), version=version))


class AnswerError(ValueError):
    """The model's answer is missing or malformed (scores 0.0, never an error)."""


class PuzzleDataError(ValueError):
    """A puzzle record (dataset row) is broken: missing or inconsistent ground truth."""


@dataclass(slots=True)
class Puzzle:
    task: str
    question: str
    answer: str
    difficulty: int = 1
    metadata: dict[str, Any] = field(default_factory=dict)

    def game_data(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "answer": self.answer,
            "difficulty": self.difficulty,
            "metadata": self.metadata,
        }

    def game_data_str(self) -> str:
        return orjson.dumps(self.game_data()).decode()

    @classmethod
    def from_game_data(cls, task: str, data: Any) -> Puzzle:
        """From a SynLogic ``Data`` dict or its JSON string; ``PuzzleDataError`` if malformed."""
        data = loaded_json(data, f"game data of task {task!r}")
        if not isinstance(data, dict):
            raise PuzzleDataError(f"game data of task {task!r} must be an object")
        metadata = data.get("metadata")
        if metadata is None and "metadata" in data:
            metadata = {}  # SynLogic's Data(question, answer) stores null (boolean_expressions)
        if not isinstance(metadata, dict):
            raise PuzzleDataError(f"game data of task {task!r} has no 'metadata' object")
        difficulty = data.get("difficulty", 1)
        if not isinstance(difficulty, int) or isinstance(difficulty, bool):
            raise PuzzleDataError(f"game data of task {task!r}: difficulty must be an integer")
        return cls(
            task=task,
            question=str(data.get("question") or ""),
            answer=str(data.get("answer") or ""),
            difficulty=difficulty,
            metadata=metadata,
        )


def loaded_json(value: Any, what: str) -> Any:
    """`value`, or the JSON it holds when it is text (a dataset column may hold either);
    ``PuzzleDataError`` naming `what` when that text is not JSON."""
    if not isinstance(value, str | bytes):
        return value
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError as e:
        raise PuzzleDataError(f"{what} is not JSON: {e}") from None


def strip_think(text: str | None) -> str:
    """The reply after the last ``</think>`` (stripped); "" when a ``<think>`` is never closed.
    Whole when untagged: correct whether or not the template injects ``<think>``."""
    return vf.strip_reasoning(text).strip()


_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[a-zA-Z0-9_+-]*\s*\n?(.*?)```", re.DOTALL)
# "The answer is ..." and, for the SynLogic prompts written in Chinese, "答案是 ..." / "答案：...".
_ANSWER_LABEL = re.compile(r"the (?:final )?answer is|(?:最终)?答案(?:是|为|[:：])", re.IGNORECASE)


def final_answer(text: str | None) -> str:
    """The final answer block of a reply (reasoning already stripped); "" when there is none.

    In order: the last ``<answer>...</answer>``; the last ``\\boxed{...}``; the last fenced code
    block; the text after the last "The answer is" (or "答案是" / "答案：" in the prompts SynLogic
    wrote in Chinese; SynLogic prompts ask for these forms). Prose without any of them yields
    "" (never the whole text).
    """
    if not text:
        return ""
    tags = _ANSWER_TAG.findall(text)
    if tags:
        return _unwrap(tags[-1])
    boxed = _last_boxed(text)
    if boxed is not None:
        return boxed
    fences = _FENCE.findall(text)
    if fences:
        return fences[-1].strip()
    labels = list(_ANSWER_LABEL.finditer(text))
    if labels:
        rest = text[labels[-1].end() :].lstrip(":：").strip()
        return rest.strip("*").strip().rstrip(".。").strip("*").strip()
    return ""


def _unwrap(block: str) -> str:
    """``$\\boxed{x}$`` or ``\\boxed{x}`` as a whole answer block is just ``x``."""
    block = block.strip()
    inner = block.strip("$").strip()
    if inner.startswith("\\boxed{"):
        found = _boxed_at(inner, 0)
        if found is not None and found[1] == len(inner):
            return found[0]
    return block


def _last_boxed(text: str) -> str | None:
    start = text.rfind("\\boxed{")
    found = _boxed_at(text, start) if start >= 0 else None
    return found[0] if found is not None else None


def _boxed_at(text: str, start: int) -> tuple[str, int] | None:
    """Content of the ``\\boxed{`` at ``start`` and the index after its closing brace."""
    i = start + len("\\boxed{")
    depth = 1
    j = i
    while j < len(text):
        if text[j] == "\\" and text[j + 1 : j + 2] in ("{", "}"):
            j += 2  # an escaped brace (a Dyck answer's \\}) is content, not structure
            continue
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text[i:j].strip(), j + 1
        j += 1
    return None


def answer_text(text: str | None) -> str:
    """``final_answer`` with a length bound; ``AnswerError`` when absent or too long."""
    ans = final_answer(text)
    if not ans:
        raise AnswerError("no final answer block")
    if len(ans) > MAX_ANSWER_CHARS:
        raise AnswerError(f"answer longer than {MAX_ANSWER_CHARS} characters")
    return ans


# -- literal parsing without eval -------------------------------------------------------------
_MAX_LITERAL_DEPTH = 6


def parse_literal(text: str) -> Any:
    """A Python literal made of ints, strings, lists and tuples, parsed without evaluating code."""
    if len(text) > MAX_ANSWER_CHARS:
        raise AnswerError("answer too long")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        raise AnswerError(f"not a literal: {type(e).__name__}") from None
    return _literal(tree.body, 0)


def _literal(node: ast.AST, depth: int) -> Any:
    if depth > _MAX_LITERAL_DEPTH:
        raise AnswerError("literal nested too deeply")
    if isinstance(node, ast.Constant) and isinstance(node.value, int | str):
        if isinstance(node.value, bool):
            raise AnswerError("booleans are not allowed here")
        if isinstance(node.value, int) and abs(node.value) > 10**9:
            raise AnswerError("number too large")
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    if isinstance(node, ast.List | ast.Tuple):
        return [_literal(e, depth + 1) for e in node.elts]
    raise AnswerError(f"unexpected {type(node).__name__} in answer")


_CELL = re.compile(r"-?\d+")
_ROW_LABEL = re.compile(r"^\s*(?:row\s*\d+|r\d+)\s*[:.)=-]?\s*", re.IGNORECASE)


def literal_rows(text: str) -> list[list[Any]] | None:
    """The rows of a grid written as a nested list literal; None when `text` is no literal
    (e.g. one ``[1, 2, 3]`` list per line: the caller reads it line by line), `AnswerError`
    when it is one but not a list of rows."""
    try:
        value = parse_literal(text)
    except AnswerError:
        return None
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(r, list) for r in value):
        raise AnswerError("grid must be a list of rows")
    return value


def literal_grid(block: str, rows: int, cols: int) -> list[list[Any]]:
    """A grid written as a list literal of `rows` rows of `cols` cells each (cells of any
    literal type: the family checks them); ``AnswerError`` otherwise."""
    value = parse_literal(block)
    if (
        not isinstance(value, list)
        or len(value) != rows
        or any(not isinstance(r, list) or len(r) != cols for r in value)
    ):
        raise AnswerError(f"grid must be a list of {rows} rows of {cols} cells")
    return value


def grid_lines(text: str) -> list[str]:
    """A grid's rows as written: one a line, or separated by ``;`` on a single line."""
    lines = text.splitlines()
    if len(lines) == 1 and ";" in text:
        return text.split(";")
    return lines


def parse_grid(text: str, rows: int, cols: int) -> list[list[int]]:
    """A ``rows`` x ``cols`` integer grid, as it is commonly written: a nested list literal, or
    one row per line (or rows separated by ``;`` on one line), cells separated by anything
    that is not a digit (spaces, commas, ``|``) or, in grids of single digits, written
    together (``1234``). Lines without a number (``---+---`` rules, table borders) and
    ``Row 1:`` labels are skipped. A flat run of rows x cols numbers on one line is rejected:
    the prompt asks for one line per row.
    """
    text = text.strip()
    grid: list[Any] | None = None
    if text.startswith("["):
        value = literal_rows(text)
        if value is not None:
            # [["1", "2"], ...]: digit strings are the digits they spell.
            grid = [
                [int(v) if isinstance(v, str) and v.isascii() and v.isdigit() else v for v in r]
                for r in value
            ]
    if grid is None:
        grid = []
        for line in grid_lines(text):
            cells = _CELL.findall(_ROW_LABEL.sub("", line))
            if not cells:
                continue
            if len(cells) == 1 and 1 < cols <= 9 and len(cells[0]) == cols:
                cells = list(cells[0])  # "1234": single-digit cells written together
            grid.append([int(x) for x in cells])
        if rows > 1 and len(grid) == 1 and len(grid[0]) == rows * cols:
            raise AnswerError("grid given on one line; one line per row expected")
    if len(grid) != rows or any(len(r) != cols for r in grid):
        raise AnswerError(f"grid must be {rows} x {cols}")
    if not all(type(v) is int for r in grid for v in r):
        raise AnswerError("grid cells must be integers")
    return grid


def require(metadata: dict[str, Any], task: str, *keys: str) -> list[Any]:
    """The values of ``keys`` in ``metadata``; ``PuzzleDataError`` naming any missing one."""
    missing = [k for k in keys if k not in metadata]
    if missing:
        raise PuzzleDataError(f"{task} puzzle metadata lacks {', '.join(missing)}")
    return [metadata[k] for k in keys]


def int_grid(value: Any, task: str, name: str, rows: int, cols: int) -> list[list[int]]:
    """Validate a metadata grid; ``PuzzleDataError`` if it is not ``rows`` x ``cols`` ints."""
    if (
        not isinstance(value, list)
        or len(value) != rows
        or any(not isinstance(r, list) or len(r) != cols for r in value)
        or any(type(v) is not int for r in value for v in r)
    ):
        raise PuzzleDataError(f"{task} metadata {name!r} must be a {rows}x{cols} integer grid")
    return value


def format_grid(grid: list[list[Any]]) -> str:
    return "\n".join(" ".join(str(v) for v in row) for row in grid)


def is_latin(grid: list[list[int]], n: int) -> bool:
    want = set(range(1, n + 1))
    return all(set(r) == want for r in grid) and all(
        {grid[r][c] for r in range(n)} == want for c in range(n)
    )


def random_latin_square(rng: Any, n: int) -> list[list[int]]:
    """A random n x n Latin square (cyclic square with rows, columns and symbols permuted)."""
    rows, cols, syms = list(range(n)), list(range(n)), list(range(1, n + 1))
    rng.shuffle(rows)
    rng.shuffle(cols)
    rng.shuffle(syms)
    return [[syms[(rows[r] + cols[c]) % n] for c in range(n)] for r in range(n)]
