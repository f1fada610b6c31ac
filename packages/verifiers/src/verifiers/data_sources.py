"""Where an environment's rows come from: the real dataset, a local copy, or a bundled sample.

Reference environments name their real dataset (a Hugging Face id) and ship a small sample so
they run offline. ``source`` picks one:

- ``"auto"`` (default): the real dataset when it loads (from the hub, or from the local cache
  under ``HF_HUB_OFFLINE=1``), else the sample with a warning. Reachability is probed first (one
  TCP connect, 2 s): ``datasets`` itself retries an unreachable hub for ~25 s before failing.
- ``"hub"``: the real dataset or an error.
- ``"sample"``: the bundled sample.
- a path (``.jsonl``/``.json``/``.parquet``/``.csv`` file, or a ``save_to_disk`` folder), a list
  of row dicts, or a ``datasets.Dataset``: those rows.

Nothing is fetched at import time; a missing column is a ``ConfigError`` naming it.
"""

from __future__ import annotations

import functools
import logging
import os
import socket
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from verifiers.errors import ConfigError

logger = logging.getLogger("verifiers.data")

SourceLike = Any  # "auto" | "hub" | "sample" | str path | Path | list[dict] | datasets.Dataset

_FILE_BUILDERS = {".jsonl": "json", ".json": "json", ".parquet": "parquet", ".csv": "csv"}
_OFFLINE_VARS = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")


def load_dataset_source(
    hub_id: str | None,
    *,
    source: SourceLike = "auto",
    sample: str | Path | None = None,
    split: str = "train",
    config: str | None = None,
    required_columns: Iterable[str] = (),
) -> Any:
    """The rows of ``source`` as a ``datasets.Dataset`` (see the module docstring)."""
    dataset = _resolve(hub_id, source, sample, split, config)
    check_required_columns(dataset, required_columns, _describe(hub_id, source, sample))
    return dataset


def load_source_rows(
    hub_id: str | None,
    *,
    source: SourceLike = "auto",
    sample: str | Path | None = None,
    split: str = "train",
    config: str | None = None,
    required_columns: Iterable[str] = (),
    drop_columns: Iterable[str] = (),
) -> tuple[list[dict[str, Any]], str]:
    """``(rows, what)``: the rows of ``source`` as dicts, for environments that validate row by
    row, and a description of where they came from for error messages.

    A list of row dicts is returned as given, not through an Arrow table, so a row with a
    value of the wrong type reaches the caller's validation (which can name the row) instead
    of failing the whole table. Anything else loads like `load_dataset_source`; columns in
    ``drop_columns`` (e.g. decoded images) are removed before the rows are materialised.
    """
    if isinstance(source, list | tuple):
        if not all(isinstance(r, dict) for r in source):
            raise ConfigError("source rows must be dicts of column -> value")
        return list(source), "rows"
    dataset = load_dataset_source(
        hub_id,
        source=source,
        sample=sample,
        split=split,
        config=config,
        required_columns=required_columns,
    )
    unwanted = [c for c in drop_columns if c in dataset.column_names]
    if unwanted:
        dataset = dataset.remove_columns(unwanted)
    return list(dataset), _describe(hub_id, source, sample)


def check_required_columns(dataset: Any, required: Iterable[str], what: str) -> None:
    missing = [c for c in required if c not in dataset.column_names]
    if missing:
        raise ConfigError(
            f"{what} lacks column(s) {', '.join(missing)} "
            f"(it has: {', '.join(dataset.column_names) or 'none'})"
        )


def hub_reachable(endpoint: str | None = None, timeout: float = 2.0) -> bool:
    """Whether the Hugging Face hub answers a TCP connect (offline variables say no at once)."""
    if _offline():
        return False
    endpoint = endpoint or os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
    return _tcp_reachable(endpoint, timeout)


def _offline() -> bool:
    return any(
        os.environ.get(v, "").strip().lower() in ("1", "true", "yes", "on") for v in _OFFLINE_VARS
    )


@functools.lru_cache(maxsize=8)
def _tcp_reachable(endpoint: str, timeout: float) -> bool:
    url = urlparse(endpoint)
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        with socket.create_connection((url.hostname or "", port), timeout=timeout):
            return True
    except OSError:
        return False


def _resolve(
    hub_id: str | None,
    source: SourceLike,
    sample: str | Path | None,
    split: str,
    config: str | None,
) -> Any:
    import datasets

    if isinstance(source, datasets.Dataset):
        return source
    if isinstance(source, datasets.DatasetDict):
        if split not in source:
            raise ConfigError(f"dataset has no split {split!r} (splits: {', '.join(source)})")
        return source[split]
    if isinstance(source, Sequence) and not isinstance(source, str | bytes):
        rows = list(source)
        if not all(isinstance(r, dict) for r in rows):
            raise ConfigError("source rows must be dicts of column -> value")
        return _from_rows(rows, "source rows")
    if source == "sample":
        return _load_sample(sample)
    if source == "hub":
        return _load_hub(hub_id, split, config)
    if source == "auto":
        if hub_id is None:
            return _load_sample(sample)
        if sample is None:
            return _load_hub(hub_id, split, config)
        try:
            return _load_hub(hub_id, split, config)
        except ConfigError as e:
            logger.warning("using the bundled sample of %s: %s", hub_id, e)
            return _load_sample(sample)
    if isinstance(source, str | Path):
        return _load_path(Path(source), split)
    raise ConfigError(
        "source must be 'auto', 'hub', 'sample', a path, a list of rows or a datasets.Dataset; "
        f"got {type(source).__name__}"
    )


def _load_hub(hub_id: str | None, split: str, config: str | None) -> Any:
    import datasets

    if hub_id is None:
        raise ConfigError("this environment has no hub dataset; pass a path or rows as source")
    if not _offline() and not hub_reachable():
        raise ConfigError(
            f"could not load {hub_id}: the Hugging Face hub is unreachable "
            "(with HF_HUB_OFFLINE=1 a cached copy is used)"
        )
    try:
        return datasets.load_dataset(hub_id, config, split=split)
    except Exception as e:  # datasets raises many unrelated types for "could not load"
        raise ConfigError(f"could not load {hub_id} ({split}) from the hub: {e}") from e


def _load_sample(sample: str | Path | None) -> Any:
    if sample is None:
        raise ConfigError("this environment ships no sample; pass source='hub' or a path")
    return _load_path(Path(sample), "train")


def _load_path(path: Path, split: str) -> Any:
    import datasets

    if not path.exists():
        raise ConfigError(f"dataset path {path} does not exist")
    if path.is_dir():
        try:
            loaded = datasets.load_from_disk(str(path))
        except Exception as e:
            raise ConfigError(f"{path} is not a dataset saved with save_to_disk: {e}") from e
        return _resolve(None, loaded, None, split, None)
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".json"):
        # Read directly: no builder cache files for the small samples environments ship.
        return _from_rows(_read_json_rows(path), str(path))
    builder = _FILE_BUILDERS.get(suffix)
    if builder is None:
        raise ConfigError(
            f"unsupported dataset file {path.name}; use one of {', '.join(sorted(_FILE_BUILDERS))}"
        )
    try:
        return datasets.load_dataset(builder, data_files=str(path), split="train")
    except Exception as e:
        raise ConfigError(f"could not read {path}: {e}") from e


def _from_rows(rows: list[dict[str, Any]], what: str) -> Any:
    """A ``Dataset`` of ``rows``; rows that do not fit one table are a `ConfigError` naming
    the column whose values differ in type (Arrow's own error names neither row nor column)."""
    import datasets

    try:
        return datasets.Dataset.from_list(rows)
    except Exception as e:  # pyarrow raises ArrowInvalid/ArrowTypeError/TypeError/ValueError
        raise ConfigError(f"{what} do not fit one table: {_mixed_column(rows) or e}") from None


def _mixed_column(rows: list[dict[str, Any]]) -> str | None:
    first: dict[str, tuple[str, int]] = {}
    for i, row in enumerate(rows):
        for key, value in row.items():
            if value is None:
                continue
            kind = (
                "number"
                if isinstance(value, int | float) and not isinstance(value, bool)
                else type(value).__name__
            )
            seen = first.setdefault(key, (kind, i))
            if seen[0] != kind:
                return (
                    f"column {key!r} holds {seen[0]} in row {seen[1]} but {kind} in row {i}; "
                    "give every row the same type (write numbers as strings, say)"
                )
    return None


def _read_json_rows(path: Path) -> list[dict[str, Any]]:
    import orjson

    text = path.read_bytes()
    try:
        if path.suffix.lower() == ".jsonl":
            rows = [orjson.loads(line) for line in text.splitlines() if line.strip()]
        else:
            rows = orjson.loads(text)
    except orjson.JSONDecodeError as e:
        raise ConfigError(f"{path} is not valid JSON: {e}") from None
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise ConfigError(
            f"{path} must hold JSON objects (one per line for .jsonl, a list for .json)"
        )
    return rows


def _describe(hub_id: str | None, source: SourceLike, sample: str | Path | None = None) -> str:
    if isinstance(source, str | Path) and source not in ("auto", "hub", "sample"):
        return f"dataset {source}"
    if source == "sample" and sample is not None:
        return f"sample {Path(sample).name}"
    return f"dataset {hub_id or 'rows'}"
