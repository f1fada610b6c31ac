"""Dataset conventions: `question` → `prompt` formatting, `example_id`, `info` as JSON, and
validated question/answer datasets."""

from __future__ import annotations

import math
import random
from typing import Any

import orjson

from verifiers.errors import ConfigError
from verifiers.pass_rate import PassRateFilter
from verifiers.utils.json_object import json_object


def build_prompt(
    question: Any, system_prompt: str | None = None, few_shot: list[dict] | None = None
) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    if system_prompt:
        messages.append({"role": "system", "content": system_prompt})
    if few_shot:
        messages.extend(few_shot)
    messages.append({"role": "user", "content": question})
    return messages


def with_system_prompt(prompt: Any, system_prompt: str | None) -> list[dict[str, Any]]:
    """A chat prompt with `system_prompt` first, unless it already starts with a system turn."""
    if isinstance(prompt, str):
        prompt = [{"role": "user", "content": prompt}]
    if system_prompt and not (prompt and prompt[0].get("role") == "system"):
        return [{"role": "system", "content": system_prompt}, *prompt]
    return list(prompt)


def check_columns(columns: list[str], what: str = "dataset") -> None:
    if "prompt" not in columns and "question" not in columns:
        raise ConfigError(
            f"{what} has neither a 'prompt' nor a 'question' column "
            f"(columns: {', '.join(columns) or 'none'}); add one of them"
        )


def with_example_ids(dataset: Any) -> tuple[Any, list[str]]:
    """`dataset` with an integer `example_id` column (row numbers where it has none; a
    non-integer one is kept as `src_id`), and its columns before that one was added."""
    columns = list(dataset.column_names)
    if "example_id" in columns and not _is_int_column(dataset, "example_id"):
        dataset = dataset.rename_column("example_id", "src_id")
        columns = list(dataset.column_names)
    if "example_id" not in columns:
        dataset = dataset.add_column("example_id", list(range(len(dataset))))
    return dataset, columns


def format_dataset(
    dataset: Any,
    system_prompt: str | None = None,
    few_shot: list[dict] | None = None,
    map_kwargs: dict[str, Any] | None = None,
    what: str = "dataset",
) -> Any:
    """Give every row a chat `prompt` and an integer `example_id`."""
    check_columns(list(dataset.column_names), what)
    # Columns are rebuilt in Python and swapped in (no Dataset.map: no progress bars, no cache
    # files); `map_kwargs` is accepted for compatibility.
    del map_kwargs
    dataset, columns = with_example_ids(dataset)
    if "prompt" not in columns:
        prompts = [build_prompt(q, system_prompt, few_shot) for q in dataset["question"]]
        dataset = dataset.add_column("prompt", prompts)
    elif system_prompt or _prompt_is_text(dataset):
        prompts = [with_system_prompt(p, system_prompt) for p in dataset["prompt"]]
        dataset = dataset.remove_columns("prompt").add_column("prompt", prompts)
    return dataset


def _is_int_column(dataset: Any, name: str) -> bool:
    dtype = str(dataset.features[name].dtype) if hasattr(dataset.features[name], "dtype") else ""
    return dtype.startswith(("int", "uint"))


def _prompt_is_text(dataset: Any) -> bool:
    feature = dataset.features["prompt"]
    return getattr(feature, "dtype", None) in ("string", "large_string")


def parse_info(info: Any) -> dict[str, Any]:
    """`info` may be a dict or a JSON string (recommended when row schemas differ)."""
    if isinstance(info, dict):  # the usual cases, once per rollout: no further call
        return info
    if info is None:
        return {}
    return json_object(info, "'info'", expected="a dict or the JSON text of an object")


MAX_REPORTED_ROW_ERRORS = 5


def text_value(value: Any) -> str | None:
    """A usable question or answer: stripped non-empty text (finite numbers are written
    out), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) or (isinstance(value, float) and math.isfinite(value)):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def prepare_qa_dataset(
    dataset: Any,
    *,
    instruction: str = "",
    pass_rate: PassRateFilter | None = None,
    task: str | None = None,
    what: str = "dataset",
) -> Any:
    """Validate question/answer rows, filter them by pass rate and build the env's columns.

    Returns a ``datasets.Dataset`` with ``question`` (``instruction``, a blank line, the
    question; just the question without an instruction), ``answer``, ``task`` (when given)
    and ``info`` (JSON: the row's own ``info`` plus ``source_row`` and ``avg_reward``, its
    pass rate or None). Raises `ConfigError` listing the rows whose question or answer is
    missing or empty, and for the filter's errors (see `PassRateFilter.apply`).
    """
    from datasets import Dataset

    from verifiers.data_sources import check_required_columns

    check_required_columns(dataset, ["question", "answer"], what)
    pass_rate = pass_rate or PassRateFilter(None)
    columns = dataset.column_names
    pass_rate.check_columns(columns, what)
    questions, answers = dataset["question"], dataset["answer"]
    rates = pass_rate.rates(dataset)
    infos = dataset["info"] if "info" in columns else [None] * len(questions)

    rows: dict[str, list[Any]] = {"question": [], "answer": [], "info": []}
    problems: list[str] = []
    for i, (q, a, rate, extra) in enumerate(zip(questions, answers, rates, infos, strict=True)):
        question, answer = text_value(q), text_value(a)
        if question is None or answer is None:
            field, value = ("question", q) if question is None else ("answer", a)
            problems.append(f"row {i}: {field} is {value!r:.60} (must be a non-empty string)")
            continue
        if not pass_rate.keeps(rate):
            continue
        info = {**(parse_info(extra) if extra is not None else {}), "source_row": i}
        info["avg_reward"] = rate
        rows["question"].append(f"{instruction}\n\n{question}" if instruction else question)
        rows["answer"].append(answer)
        rows["info"].append(orjson.dumps(info).decode())
    if problems:
        more = len(problems) - MAX_REPORTED_ROW_ERRORS
        listed = "; ".join(problems[:MAX_REPORTED_ROW_ERRORS])
        raise ConfigError(
            f"{what} has {len(problems)} unusable row(s): {listed}"
            + (f"; and {more} more" if more > 0 else "")
        )
    if not rows["question"]:
        if not pass_rate.active:
            raise ConfigError(f"{what} has no rows")
        raise pass_rate.nothing_left(what, len(questions), sum(r is None for r in rates))
    if task is not None:
        rows["task"] = [task] * len(rows["question"])
    return Dataset.from_dict(rows)


def callable_builder(obj: Any) -> bool:
    """A zero-argument dataset builder (not a `datasets.Dataset`)."""
    return callable(obj) and not hasattr(obj, "column_names")


def take_rows(ds: Any, n: int, seed: int | None) -> Any:
    if seed is not None:
        ds = ds.shuffle(seed=seed)
    if n is not None and n > 0:
        ds = ds.select(range(min(n, len(ds))))
    return ds


def dataset_rows(ds: Any, n: int = -1, seed: int | None = None, shuffle: bool = False) -> list:
    """The first `n` rows (optionally shuffled by `seed`) as dicts.

    Indexes the dataset directly instead of `shuffle`/`select`, which fingerprint the dataset
    by pickling and cost more than the rollouts of a small eval."""
    total = len(ds)
    count = total if n is None or n < 0 else min(n, total)
    if shuffle:
        order = list(range(total))
        random.Random(seed or 0).shuffle(order)
        columns = ds[order[:count]]
    else:
        columns = ds[:count]
    names = list(columns)
    return [dict(zip(names, values, strict=True)) for values in zip(*columns.values(), strict=True)]
