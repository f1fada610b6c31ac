"""Saving rollouts as they finish and reading them back (a run's summary: `verifiers.run_summary`)."""

from __future__ import annotations

import logging
import math
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson

from verifiers.run_summary import member_of, pass_at_k, summarize

__all__ = [
    "METADATA_FILE",
    "RESULTS_FILE",
    "ResultsWriter",
    "dumps",
    "member_of",
    "parsed_answer",
    "pass_at_k",
    "read_metadata",
    "read_results",
    "summarize",
    "write_metadata",
]

logger = logging.getLogger(__name__)

RESULTS_FILE = "results.jsonl"
METADATA_FILE = "metadata.json"


def _default(obj: Any) -> Any:
    dump = getattr(obj, "model_dump", None)
    if dump is not None:
        return dump()
    if isinstance(obj, (set, tuple)):
        return list(obj)
    return repr(obj)


def dumps(obj: Any) -> bytes:
    """JSON with NaN written as null (the JSON standard has no NaN)."""
    return orjson.dumps(obj, default=_default, option=orjson.OPT_SERIALIZE_NUMPY)


def parsed_answer(parser: Any, completion: Any) -> str | None:
    """What the grader's parser extracts from a completion, as a record keeps it: a string,
    or None when nothing was parsed (no parser, None or blank, or the parser raised). Called
    once per rollout while it is scored, so the record shows what the grader saw."""
    parse = getattr(parser, "parse_answer", None)
    if parse is None or completion is None:
        return None
    try:
        value = parse(completion)
    except Exception as e:  # a parser that fails on odd output must not lose the rollout
        logger.debug("parse_answer failed: %r", e)
        return None
    if value is None:
        return None
    text = value if isinstance(value, str) else str(value)
    return text if text.strip() else None


class ResultsWriter:
    """Appends one JSON line per rollout to `results.jsonl`, flushed after every batch, so a
    killed run loses nothing that finished."""

    def __init__(self, run_dir: str | os.PathLike[str]) -> None:
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.run_dir / RESULTS_FILE
        self._file = open(self.path, "ab")
        self._repair_tail()
        self.count = 0

    def _repair_tail(self) -> None:
        # A run killed mid-write can leave a partial last line; end it so appends stay valid.
        size = self._file.tell()
        if size:
            with open(self.path, "rb") as f:
                f.seek(size - 1)
                if f.read(1) != b"\n":
                    self._file.write(b"\n")

    def write(self, outputs: Iterable[Mapping[str, Any]]) -> None:
        data = b"".join(dumps(o) + b"\n" for o in outputs)
        if data:
            self._file.write(data)
            self._file.flush()
            self.count += data.count(b"\n")

    def close(self) -> None:
        if not self._file.closed:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()


def read_results(run_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every complete line of `results.jsonl`; a truncated last line (a killed run) is skipped."""
    path = Path(run_dir) / RESULTS_FILE
    if not path.exists():
        return []
    outputs = []
    for line in path.read_bytes().splitlines():
        if not line.strip():
            continue
        try:
            row = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if row.get("reward") is None:
            row["reward"] = math.nan
        outputs.append(row)
    return outputs


def write_metadata(run_dir: str | os.PathLike[str], metadata: dict[str, Any]) -> None:
    """Atomically replace `metadata.json`."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=run_dir, prefix=".metadata.", suffix=".tmp")
    with os.fdopen(fd, "wb") as f:
        f.write(orjson.dumps(metadata, default=_default, option=orjson.OPT_INDENT_2))
    os.replace(tmp, run_dir / METADATA_FILE)


def read_metadata(run_dir: str | os.PathLike[str]) -> dict[str, Any]:
    path = Path(run_dir) / METADATA_FILE
    return orjson.loads(path.read_bytes()) if path.exists() else {}
