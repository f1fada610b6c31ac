"""Building a run's index: each complete line of ``results.jsonl`` becomes a row (where it lies
in the file, the columns pages filter and sort on) plus its metric values and facet counts.
Only what was appended since the last refresh is read."""

from __future__ import annotations

import math
import os
import sqlite3
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from .index_db import SCHEMA_VERSION, IndexDb, meta

FACETS = ("error", "stop", "member")  # the indexed columns whose values the filter menus list
_FACET_AT = {"error": 6, "stop": 7, "member": 8}  # their places in an inserted row
_HEAD_BYTES = 256  # the file's first bytes, to notice a results.jsonl replaced by another
_SHORT = 200  # characters of an answer kept in the index (the page reads the record for more)


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _short(value: Any) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else orjson.dumps(value, default=repr).decode()
    return text[:_SHORT]


def member_of(record: Mapping[str, Any]) -> str | None:
    """The EnvGroup/mixture member of a record: its ``task``, else its ``info.env_id`` route
    (as `verifiers.results.member_of` reads it)."""
    task = record.get("task")
    if isinstance(task, str):
        return task
    info = record.get("info")
    route = info.get("env_id") if isinstance(info, dict) else None
    if isinstance(route, list) and route:
        route = route[0]
    return route if isinstance(route, str) else None


def count_turns(record: Mapping[str, Any]) -> int | None:
    """Assistant messages in the completion (a plain-text completion is one turn)."""
    completion = record.get("completion")
    if isinstance(completion, str):
        return 1
    if isinstance(completion, list):
        return sum(1 for m in completion if isinstance(m, dict) and m.get("role") == "assistant")
    return None


def _columns(record: Mapping[str, Any]) -> tuple[Any, ...]:
    error = record.get("error")
    if isinstance(error, dict):
        error_type = str(error.get("error") or "Error")
    elif error:
        error_type = str(error)[:_SHORT]
    else:
        error_type = None
    raw_usage = record.get("token_usage")
    usage: Mapping[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
    example_id = record.get("example_id")
    if not isinstance(example_id, (int, str)) or isinstance(example_id, bool):
        example_id = None if example_id is None else str(example_id)
    stop = record.get("stop_condition")
    rollout_index = record.get("rollout_index")
    return (
        example_id,
        rollout_index if isinstance(rollout_index, int) else None,
        _finite(record.get("reward")),
        error_type,
        str(stop) if stop is not None else None,
        member_of(record),
        count_turns(record),
        usage.get("input_tokens") if isinstance(usage.get("input_tokens"), int) else None,
        usage.get("output_tokens") if isinstance(usage.get("output_tokens"), int) else None,
        _short(record.get("parsed_answer")),
        _short(record.get("answer")),
    )


class Indexer:
    """Keeps `db` in step with the `records` file. `indexed` is (bytes, head) of what the index
    holds, changing whenever it grows or is rebuilt (here or by another process)."""

    def __init__(self, records: Path, db: IndexDb) -> None:
        self.records = records
        self.db = db
        self._seen: tuple[int, bytes] | None = None  # (size, head) of a file fully indexed
        self.indexed: tuple[int, bytes] | None = None

    def _file_state(self) -> tuple[int, bytes]:
        try:
            with open(self.records, "rb") as f:
                head = f.read(_HEAD_BYTES)
                return os.fstat(f.fileno()).st_size, head
        except FileNotFoundError:
            return 0, b""

    def refresh(self) -> int:
        """Index the lines appended since the last refresh; returns how many were added."""
        size, head = self._file_state()
        now = (size, head[: min(len(head), size)])
        with self.db.lock:
            if self._seen == now:
                return 0  # the file is as this index last left it: no transaction needed
            with self.db.transaction() as db:
                added, done = self._append(db, size, head)
            self.indexed = (done, head[: min(len(head), done)])
            # A partial last line keeps the file unseen, so the next call looks again.
            self._seen = now if done == size else None
            return added

    def _append(self, db: sqlite3.Connection, size: int, head: bytes) -> tuple[int, int]:
        done = int(meta(db, "indexed_bytes") or 0)
        known_head = bytes.fromhex(meta(db, "head") or "")
        if size < done or not head.startswith(known_head[: min(len(head), done)]):
            for table in ("rollouts", "metrics", "facets", "meta"):
                db.execute(f"DELETE FROM {table}")
            done = 0
        if size == done:
            return 0, done
        line = db.execute("SELECT COALESCE(MAX(line) + 1, 0) FROM rollouts").fetchone()[0]
        skipped = int(meta(db, "skipped") or 0)
        added = 0
        rows: list[tuple[Any, ...]] = []
        metric_rows: list[tuple[Any, ...]] = []
        offset = done
        with open(self.records, "rb") as f:
            f.seek(done)
            for raw in f:
                if not raw.endswith(b"\n"):
                    break  # being written: index it once its newline is there
                try:
                    record = orjson.loads(raw) if raw.strip() else None
                except orjson.JSONDecodeError:
                    record = None
                if isinstance(record, dict):
                    rows.append((line, offset, len(raw), *_columns(record)))
                    metrics = record.get("metrics")
                    if isinstance(metrics, dict):
                        metric_rows.extend((line, str(k), _finite(v)) for k, v in metrics.items())
                    line += 1
                    added += 1
                elif raw.strip():
                    skipped += 1
                offset += len(raw)
                if len(rows) >= 2000:
                    _insert(db, rows, metric_rows)
        _insert(db, rows, metric_rows)
        for key, value in (
            ("schema", SCHEMA_VERSION),
            ("indexed_bytes", str(offset)),
            ("head", head[: min(len(head), offset)].hex()),
            ("skipped", str(skipped)),
        ):
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
        return added, offset


def _insert(db: sqlite3.Connection, rows: list[Any], metric_rows: list[Any]) -> None:
    db.executemany(f"INSERT INTO rollouts VALUES ({', '.join('?' * 14)})", rows)
    db.executemany("INSERT OR REPLACE INTO metrics VALUES (?, ?, ?)", metric_rows)
    counts: Counter[tuple[str, str]] = Counter()
    for kind, at in _FACET_AT.items():
        counts.update((kind, r[at]) for r in rows if r[at] is not None)
    counts.update(("metric", m[1]) for m in metric_rows)
    db.executemany(
        "INSERT INTO facets VALUES (?, ?, ?) "
        "ON CONFLICT (kind, value) DO UPDATE SET n = n + excluded.n",
        [(kind, value, n) for (kind, value), n in counts.items()],
    )
    rows.clear()
    metric_rows.clear()
