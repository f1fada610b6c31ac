"""i3-logic: machine-verified logic puzzles, every SynLogic task family INTELLECT-3 trained on.

``load_environment()`` builds a single-turn environment over the INTELLECT-3-RL ``logic`` rows
(``question`` + ``info`` with ``task`` and ``game_data_str``; offline: the bundled sample in the
same format), or, with ``source="generate"``, over puzzles made by this package's seeded
generators. The reward is 1.0 when the task's verifier accepts the reply, else 0.0. See README.md.
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

import verifiers as vf
from i3_logic.families import (
    FAMILIES,
    GENERATED,
    TASKS,
    Family,
    generate,
    get_family,
    level,
    verify,
)
from i3_logic.puzzle import (
    ANSWER_INSTRUCTION,
    AnswerError,
    Puzzle,
    PuzzleDataError,
    final_answer,
    loaded_json,
    strip_think,
)

__all__ = [
    "ANSWER_INSTRUCTION",
    "DIFFICULTY_KEY",
    "FAMILIES",
    "GENERATED",
    "HUB_ID",
    "TASKS",
    "AnswerError",
    "Family",
    "LogicParser",
    "Puzzle",
    "PuzzleDataError",
    "final_answer",
    "generate",
    "generate_rows",
    "load_environment",
    "load_rows",
    "puzzle_from_info",
    "strip_think",
    "verify",
]

logger = logging.getLogger("i3_logic")

HUB_ID = "PrimeIntellect/INTELLECT-3-RL"
DIFFICULTY_KEY = "avg@16_qwen3_4b_instruct_2507"
# Upstream drops these tasks from the loaded rows by default.
TASKS_TO_SKIP: tuple[str, ...] = ("arc_agi", "arc_agi_2", "buggy_tables")
SAMPLE = Path(__file__).parent / "data" / "sample.jsonl"


class LogicParser(vf.Parser):
    """The reply after the last ``</think>`` ("" for an unclosed ``<think>``), whole if untagged."""

    def parse(self, text: str) -> str:
        return strip_think(text)


def _info_row(
    question: str, task: str, puzzle: Puzzle, extra: dict[str, Any] | None = None
) -> dict:
    info = {"task": task, "game_data_str": puzzle.game_data_str()}
    return {
        "question": question,
        "answer": "",
        "info": orjson.dumps(info).decode(),
        **(extra or {}),
    }


def generate_rows(
    families: list[str] | str | None = None,
    num_examples: int = 50,
    difficulty: int | str = 1,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """``num_examples`` generated puzzles per family, as dataset rows (family order kept).

    ``difficulty`` is 1-3 / "easy" / "medium" / "hard", or "mixed" (levels 1, 2, 3 in turn).
    """
    rows = []
    chosen = _select(families)
    lacking = [f.name for f in chosen if f.generate is None]
    if lacking and families is not None:
        raise vf.ConfigError(
            f"no generator for {', '.join(lacking)}: their puzzles come from loaded rows "
            f"(source='auto'); families with a generator: {', '.join(sorted(GENERATED))}"
        )
    for fam in chosen:
        if fam.generate is None:
            continue
        for i in range(num_examples):
            lvl = i % 3 + 1 if difficulty == "mixed" else level(difficulty)
            puzzle = generate(fam.name, seed, lvl, i)
            rows.append(_info_row(puzzle.question, fam.name, puzzle))
    return rows


def _select(families: list[str] | str | None) -> list[Family]:
    if families is None:
        return list(FAMILIES.values())
    if isinstance(families, str):
        families = [f.strip() for f in families.split(",") if f.strip()]
    try:
        chosen = [get_family(f) for f in families]
    except PuzzleDataError as e:
        raise vf.ConfigError(str(e)) from None
    if not chosen:
        raise vf.ConfigError("families is empty; name at least one puzzle family")
    return list(dict.fromkeys(chosen))


def puzzle_from_info(info: Any) -> Puzzle:
    """The puzzle of a row's ``info`` (dict or JSON string); ``PuzzleDataError`` if broken."""
    info = loaded_json(info, "info")
    if not isinstance(info, dict):
        raise PuzzleDataError("info must be an object with 'task' and 'game_data_str'")
    task = info.get("task")
    if not isinstance(task, str) or not task:
        raise PuzzleDataError("info has no 'task'")
    data = info.get("game_data_str") or info.get("game_data")
    if not data:
        raise PuzzleDataError(f"info of task {task!r} has no 'game_data_str' (or 'game_data')")
    puzzle = Puzzle.from_game_data(task, data)
    get_family(task).check(puzzle)
    return puzzle


def load_rows(
    dataset: Any,
    families: list[str] | str | None = None,
    difficulty_key: str = DIFFICULTY_KEY,
    min_avg_reward: float = 0.0,
    max_avg_reward: float = 1.0,
    invalid_rows: str = "error",
    keep_unrated: bool = False,
    tasks_to_skip: Sequence[str] = TASKS_TO_SKIP,
) -> list[dict[str, Any]]:
    """Rows of the families this package verifies, validated; unknown tasks are skipped.

    A row whose ``info`` is not an object with a ``task`` or whose ``question`` is empty is a
    ``ConfigError`` naming the row. A row of a known task whose puzzle data the family cannot
    verify (missing or malformed ground truth) is a ``ConfigError`` too, or, with
    ``invalid_rows="skip"``, dropped with a warning. The pass-rate filter (`vf.PassRateFilter`)
    keeps ``min_avg_reward <= row[difficulty_key] <= max_avg_reward``; with non-default bounds
    the column must exist, and rows without a rate are dropped unless ``keep_unrated``.
    """
    if invalid_rows not in ("error", "skip"):
        raise vf.ConfigError(f"invalid_rows must be 'error' or 'skip'; got {invalid_rows!r}")
    wanted = {f.name for f in _select(families)}
    pass_rate = vf.PassRateFilter(difficulty_key, min_avg_reward, max_avg_reward, keep_unrated)
    pass_rate.check_columns(dataset.column_names)
    rows: list[dict[str, Any]] = []
    skipped: Counter[str] = Counter()  # rows by task this package cannot verify
    invalid: Counter[str] = Counter()  # rows by task whose puzzle data is broken
    filtered, unwanted = 0, set(tasks_to_skip)
    first_invalid = ""
    for i, row in enumerate(dataset):
        question = row.get("question")
        if not isinstance(question, str) or not question.strip():
            raise vf.ConfigError(f"row {i}: 'question' must be non-empty text")
        info = row.get("info")
        task = _task_of(info, i)
        if task in unwanted:
            continue
        if task not in TASKS:
            skipped[task] += 1
            continue
        if TASKS[task].name not in wanted:
            continue
        try:
            puzzle = puzzle_from_info(info)
        except PuzzleDataError as e:
            if invalid_rows == "error":
                raise vf.ConfigError(f"row {i} ({task}): {e}") from None
            invalid[task] += 1
            first_invalid = first_invalid or f"row {i} ({task}): {e}"
            continue
        rate = pass_rate.rate(row.get(difficulty_key), i)
        if not pass_rate.keeps(rate):
            filtered += 1
            continue
        extra = {} if rate is None else {difficulty_key: rate}
        rows.append(_info_row(question, task, puzzle, extra))
    if skipped:
        logger.warning(
            "i3-logic: skipped %d row(s) of tasks it cannot verify: %s",
            sum(skipped.values()),
            ", ".join(f"{t} ({n})" for t, n in skipped.most_common()),
        )
    if invalid:
        logger.warning(
            "i3-logic: skipped %d row(s) whose puzzle data cannot be verified: %s; first: %s",
            sum(invalid.values()),
            ", ".join(f"{t} ({n})" for t, n in invalid.most_common()),
            first_invalid,
        )
    if not rows:
        raise vf.ConfigError(
            f"no rows left (skipped {sum(skipped.values())} of unknown tasks, "
            f"{sum(invalid.values())} unverifiable, {filtered} by the difficulty filter); "
            f"known tasks: {', '.join(sorted(TASKS))}"
        )
    return rows


def _task_of(info: Any, i: int) -> str:
    if isinstance(info, str | bytes):
        try:
            info = orjson.loads(info)
        except orjson.JSONDecodeError:
            raise vf.ConfigError(f"row {i}: info is not JSON: {str(info)[:80]!r}") from None
    if not isinstance(info, dict):
        raise vf.ConfigError(
            f"row {i}: info must be an object (or its JSON) with 'task' and 'game_data_str'"
        )
    task = info.get("task")
    if not isinstance(task, str) or not task:
        raise vf.ConfigError(f"row {i}: info has no 'task'")
    return task


def load_environment(
    source: Any = "auto",
    dataset_name: str = HUB_ID,
    dataset_subset: str | None = "logic",
    dataset_split: str = "train",
    dataset_shuffle: bool | None = None,
    difficulty_key: str = DIFFICULTY_KEY,
    min_avg_reward: float = 0.0,
    max_avg_reward: float = 1.0,
    tasks_to_skip: Sequence[str] = TASKS_TO_SKIP,
    families: list[str] | str | None = None,
    num_examples: int = 50,
    difficulty: int | str = 1,
    seed: int = 0,
    keep_unrated: bool = False,
    invalid_rows: str = "error",
    system_prompt: str | None = None,
) -> vf.Environment:
    """Single-turn logic puzzles scored by per-family verifiers.

    Args:
        source: "auto" (default) loads the INTELLECT-3-RL ``logic`` rows, or the bundled
            sample (same format) with a warning when the hub is unreachable; "hub", "sample",
            a path, rows or a Dataset load such rows via ``vf.load_dataset_source``;
            "generate" (or None) makes puzzles with this package's generators.
        dataset_name / dataset_subset / dataset_split: the hub dataset, config and split that
            ``source="auto"``/``"hub"`` loads (upstream's names and defaults).
        dataset_shuffle: shuffle the rows with ``seed``; None (default): loaded rows keep the
            dataset's order (upstream's False), generated ones are interleaved across families.
        difficulty_key, min_avg_reward, max_avg_reward: pass-rate filter for loaded rows.
        tasks_to_skip: loaded rows of these tasks are dropped (upstream's default list).
        families: family names or task keys (list or comma-separated string); None = all.
            Loaded rows are kept only for these; generated puzzles are made for these.
        num_examples: generated puzzles per family (``source="generate"`` only).
        difficulty: 1/"easy", 2/"medium", 3/"hard", or "mixed" (generated puzzles only).
        seed: generator seed; the same seed gives the same puzzles.
        keep_unrated: with a filter active, keep loaded rows whose pass rate is empty.
        invalid_rows: "error" (default) stops on a loaded row whose puzzle data its family
            cannot verify; "skip" drops such rows with a warning.
        system_prompt: optional system prompt (none by default; prompts carry the format).
    """
    if not isinstance(num_examples, int) or num_examples < 1:
        raise vf.ConfigError(f"num_examples must be a positive integer; got {num_examples!r}")
    if difficulty != "mixed":
        try:
            level(difficulty)
        except ValueError as e:
            raise vf.ConfigError(str(e)) from None
    if isinstance(tasks_to_skip, str) or not all(isinstance(t, str) for t in tasks_to_skip):
        raise vf.ConfigError(f"tasks_to_skip must be a list of task names; got {tasks_to_skip!r}")
    generating = source is None or source == "generate"
    if generating:
        rows = generate_rows(families, num_examples, difficulty, seed)
    else:
        dataset = vf.load_dataset_source(
            dataset_name,
            source=source,
            sample=SAMPLE,
            split=dataset_split,
            config=dataset_subset,
            required_columns=["question", "info"],
        )
        rows = load_rows(
            dataset,
            families,
            difficulty_key,
            min_avg_reward,
            max_avg_reward,
            invalid_rows,
            keep_unrated,
            tasks_to_skip,
        )
    if dataset_shuffle or (dataset_shuffle is None and generating):
        random.Random(seed).shuffle(rows)

    from datasets import Dataset

    parser = LogicParser()

    def correct_answer(completion: Any, info: dict[str, Any], parser: LogicParser) -> float:
        """1.0 when the family verifier accepts the final answer, else 0.0."""
        puzzle = puzzle_from_info(info)  # a broken row raises: recorded as an error, not a 0
        return verify(puzzle, parser.parse_answer(completion) or "")

    def answer_block(completion: Any, parser: LogicParser) -> float:
        """Metric: the reply has a final answer block after its reasoning."""
        return 1.0 if final_answer(parser.parse_answer(completion) or "") else 0.0

    rubric = vf.Rubric(funcs=[correct_answer], parser=parser)
    rubric.add_metric(answer_block)
    return vf.SingleTurnEnv(
        dataset=Dataset.from_list(rows),
        system_prompt=system_prompt,
        parser=parser,
        rubric=rubric,
    )
