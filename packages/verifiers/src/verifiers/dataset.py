"""Dataset conventions: `question` → `prompt` formatting, `example_id`, `info` as JSON."""

from __future__ import annotations

from typing import Any

import orjson

from verifiers.errors import ConfigError


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


def format_dataset(
    dataset: Any,
    system_prompt: str | None = None,
    few_shot: list[dict] | None = None,
    map_kwargs: dict[str, Any] | None = None,
    what: str = "dataset",
) -> Any:
    """Give every row a chat `prompt` and an integer `example_id`."""
    columns = list(dataset.column_names)
    check_columns(columns, what)
    # Columns are rebuilt in Python and swapped in (no Dataset.map: no progress bars, no cache
    # files); `map_kwargs` is accepted for compatibility.
    del map_kwargs
    if "example_id" in columns and not _is_int_column(dataset, "example_id"):
        dataset = dataset.rename_column("example_id", "src_id")
        columns = list(dataset.column_names)
    if "example_id" not in columns:
        dataset = dataset.add_column("example_id", list(range(len(dataset))))

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
    if info is None or info == "":
        return {}
    if isinstance(info, str):
        try:
            value = orjson.loads(info)
        except orjson.JSONDecodeError as e:
            raise ConfigError(f"'info' is a string but not JSON: {e}") from None
        if not isinstance(value, dict):
            raise ConfigError(f"'info' JSON must be an object, got {type(value).__name__}")
        return value
    if isinstance(info, dict):
        return info
    raise ConfigError(f"'info' must be a dict or a JSON string, got {type(info).__name__}")
