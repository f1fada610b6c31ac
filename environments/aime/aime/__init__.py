"""AIME 2024 and 2025: thirty competition problems a year, each with an integer answer 0-999.

Single turn. The model is asked to reason step by step and put its final answer in
``\\boxed{}``; the answer is graded with math-verify (`vf.MathRubric`) against the gold integer,
as the INTELLECT-3 evaluation environments grade it. See README.md for the reward and the data.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import verifiers as vf
from verifiers import ConfigError

__all__ = [
    "INSTRUCTION",
    "OFFICIAL_INSTRUCTION",
    "YEARS",
    "load_aime2024",
    "load_aime2025",
    "load_environment",
    "normalize_answer",
]

DATA_DIR = Path(__file__).parent / "data"
logger = logging.getLogger("aime")
#: The instruction after each problem, in our words. Upstream's own line (the INTELLECT-3
#: evaluation prompt) is loaded at run time with ``instruction_prompt_post="official"``.
INSTRUCTION = "Think the problem through step by step, then give the final answer inside \\boxed{}."
#: Where upstream's line is published: the INTELLECT-3 version of its aime2025 environment
#: (aime2024's holds the same constant).
OFFICIAL_INSTRUCTION = vf.PromptSource(
    url="https://raw.githubusercontent.com/PrimeIntellect-ai/research-environments/"
    "b9cb04acef3b5608a0e05883af7f329c0c69dbaa/environments/aime2025/aime2025.py",
    name="INSTRUCTION_PROMPT",
)


class _YearSource(NamedTuple):
    hub_id: str
    configs: tuple[str | None, ...]
    split: str
    question_column: str


#: Where each year's problems come from (dataset id, configs, split, question column).
YEARS: dict[int, _YearSource] = {
    2024: _YearSource("HuggingFaceH4/aime_2024", (None,), "train", "problem"),
    2025: _YearSource("opencompass/AIME2025", ("AIME2025-I", "AIME2025-II"), "test", "question"),
}
_QUESTION_COLUMNS = ("problem", "question")
_ANSWER_RE = re.compile(r"\s*\$?\s*(\d{1,3})\s*\$?\s*")


def normalize_answer(value: Any) -> str | None:
    """The gold answer as a canonical integer string (``"070"`` -> ``"70"``), or None when it
    is not an AIME answer (an integer from 0 to 999)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value) if 0 <= value <= 999 else None
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and 0 <= value <= 999 else None
    if isinstance(value, str):
        m = _ANSWER_RE.fullmatch(value)
        return str(int(m.group(1))) if m else None
    return None


def _parse_years(year: Any) -> list[int]:
    if isinstance(year, str) and year.strip().lower() in ("both", "all"):
        return sorted(YEARS)
    items = list(year) if isinstance(year, list | tuple) else [year]
    years: list[int] = []
    for item in items:
        try:
            y = int(item)
        except (TypeError, ValueError):
            y = None
        if y not in YEARS or isinstance(item, bool):
            raise ConfigError(f"year must be 2024, 2025, 'both' or a list of them; got {year!r}")
        if y not in years:
            years.append(y)
    if not years:
        raise ConfigError("year must name at least one year")
    return years


def _load_hub_year(src: _YearSource) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for config in src.configs:
        ds = vf.load_dataset_source(
            src.hub_id,
            source="hub",
            split=src.split,
            config=config,
            required_columns=[src.question_column, "answer"],
        )
        for row in ds:
            rows.append({**row, "_contest": config})
    return rows


def _load_year(year: int, source: Any) -> tuple[list[dict[str, Any]], str]:
    src = YEARS[year]
    sample = DATA_DIR / f"sample_{year}.jsonl"
    if source == "hub":
        return _load_hub_year(src), src.hub_id
    if source == "auto":
        try:
            return _load_hub_year(src), src.hub_id
        except ConfigError as e:
            logger.warning("AIME %s: using the bundled sample: %s", year, e)
            source = "sample"
    if source == "sample":
        ds = vf.load_dataset_source(None, source="sample", sample=sample)
        return list(ds), f"the bundled AIME {year} sample"
    if isinstance(source, list | tuple):
        # Rows are used as given (no Arrow round trip, which would reject mixed value types).
        if not all(isinstance(r, dict) for r in source):
            raise ConfigError("source rows must be dicts of column -> value")
        return list(source), "rows"
    ds = vf.load_dataset_source(None, source=source)
    return list(ds), f"dataset {source}" if isinstance(source, str | Path) else "dataset"


def _build_rows(
    raw: list[dict[str, Any]], year: int, what: str, pre: str, post: str
) -> list[dict[str, Any]]:
    rows = []
    for i, row in enumerate(raw):
        question = next((row[c] for c in _QUESTION_COLUMNS if row.get(c) is not None), None)
        if question is None:
            raise ConfigError(
                f"{what} row {i} has no problem text (a 'problem' or 'question' column); "
                f"it has: {', '.join(sorted(row))}"
            )
        if not isinstance(question, str) or not question.strip():
            raise ConfigError(f"{what} row {i}: the problem text is empty or not a string")
        answer = normalize_answer(row.get("answer"))
        if answer is None:
            raise ConfigError(
                f"{what} row {i}: answer {row.get('answer')!r} is not an integer from 0 to 999"
            )
        info = {
            "year": year,
            "id": None if row.get("id") is None else str(row["id"]),
            "contest": row.get("_contest"),
        }
        rows.append(
            {
                "question": pre + question.strip() + post,
                "answer": answer,
                "info": info,
                "task": "aime",
            }
        )
    return rows


def load_environment(
    year: int | str | list[int] = 2025,
    source: Any = "auto",
    system_prompt: str | None = None,
    math_verify_timeout: float = 5.0,
    max_workers: int | None = None,
    instruction_prompt_pre: str = "",
    instruction_prompt_post: str = "\n" + INSTRUCTION,
    sampling_args: dict[str, Any] | None = None,
) -> vf.Environment:
    """The AIME benchmark as a single-turn environment.

    No ``**kwargs``: an argument this function does not name is a TypeError (and a ConfigError
    listing the accepted ones through ``vf.load_environment``), never silently stored. The
    upstream ids ``aime2024`` / ``aime2025`` are entry points of this package
    (`load_aime2024`, `load_aime2025`).

    Args:
        year: 2024, 2025, "both" (2024 then 2025), or a list of years.
        source: "auto" (the real datasets when reachable, else the bundled samples, with a
            warning), "hub" (the real datasets or an error), "sample", or, for one year at a
            time, a local file / folder, a list of row dicts or a ``datasets.Dataset`` with a
            ``problem`` (or ``question``) column and an integer ``answer`` column.
        system_prompt: an optional system message (the published evaluation uses none).
        math_verify_timeout: math-verify's per-operation time limit, in seconds.
        max_workers: size of the grading process pool (default: the SDK's choice).
        instruction_prompt_pre / instruction_prompt_post: text put before / after the problem
            (the later upstream's names; default: problem + newline + our instruction).
            ``instruction_prompt_post="official"``: a newline + upstream's INTELLECT-3 line,
            loaded at load time and cached on disk (`OFFICIAL_INSTRUCTION`).
        sampling_args: default sampling arguments of the environment.
    """
    for name, text in (
        ("instruction_prompt_pre", instruction_prompt_pre),
        ("instruction_prompt_post", instruction_prompt_post),
    ):
        if not isinstance(text, str):
            raise ConfigError(f"{name} must be a string, got {text!r}")
    if instruction_prompt_post.strip().lower() == "official":
        instruction_prompt_post = "\n" + vf.resolve_prompt(
            "official", INSTRUCTION, [OFFICIAL_INSTRUCTION], argument="instruction_prompt_post"
        )
    years = _parse_years(year)
    custom = source not in ("auto", "hub", "sample")
    if custom and len(years) > 1:
        raise ConfigError(
            "a local path, rows or a Dataset as source holds one year's problems: "
            "pass year=2024 or year=2025 with it"
        )
    rows: list[dict[str, Any]] = []
    for y in years:
        raw, what = _load_year(y, source)
        rows.extend(_build_rows(raw, y, what, instruction_prompt_pre, instruction_prompt_post))
    if not rows:
        raise ConfigError("the AIME dataset has no rows")

    from datasets import Dataset

    rubric = vf.MathRubric(timeout_seconds=math_verify_timeout, max_workers=max_workers)
    return vf.SingleTurnEnv(
        dataset=Dataset.from_list(rows),
        system_prompt=system_prompt,
        parser=rubric.parser,
        rubric=rubric,
        sampling_args=sampling_args,
    )


def _one_year(year: int, doc: str) -> Callable[..., vf.Environment]:
    """Upstream's per-year environment id: `load_environment` with ``year`` fixed."""

    def load(
        system_prompt: str | None = None,
        source: Any = "auto",
        math_verify_timeout: float = 5.0,
        max_workers: int | None = None,
        sampling_args: dict[str, Any] | None = None,
    ) -> vf.Environment:
        return load_environment(
            year=year,
            source=source,
            system_prompt=system_prompt,
            math_verify_timeout=math_verify_timeout,
            max_workers=max_workers,
            sampling_args=sampling_args,
        )

    load.__name__ = load.__qualname__ = f"load_aime{year}"
    load.__doc__ = doc
    return load


load_aime2024 = _one_year(
    2024,
    """Upstream's ``aime2024`` environment id: `load_environment` with ``year=2024`` (upstream
    takes only ``system_prompt``; the rest are ours).""",
)
load_aime2025 = _one_year(
    2025, """Upstream's ``aime2025`` environment id: `load_environment` with ``year=2025``."""
)
