"""An SQLite index beside a run over its append-only ``results.jsonl``.

Each complete line gets a row: where it lies in the file (so a page reads one record with one
seek) and the columns pages filter and sort on. ``refresh()`` indexes only what was appended
since the last call and leaves a partial last line (a run still writing) for the next one.
The parts: `index_db` (the SQLite file), `index_build` (reading appended lines into it),
`index_rows` (pages of rows), `index_stats` (whole-run answers); `RolloutIndex` puts them
together and caches the answers that scan the run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import orjson

from .index_build import FACETS, Indexer, count_turns, member_of
from .index_db import INDEX_FILE, SCHEMA_VERSION, IndexDb
from .index_rows import RowReader
from .index_stats import member_means, reward_histogram
from .query import Filters, Histogram, Row, example_key, where

__all__ = [
    "FACETS",
    "INDEX_FILE",
    "SCHEMA_VERSION",
    "RolloutIndex",
    "count_turns",
    "member_of",
]

T = TypeVar("T")


class RolloutIndex:
    """The index of one run's ``results.jsonl``, kept in ``index_dir``.

    Safe to share between threads (one connection behind a lock); several processes may open
    the same index (SQLite's WAL and an immediate transaction around each refresh). Answers
    that scan the run (counts, histogram, per-member and per-example means) are cached until
    the index grows."""

    def __init__(self, records: Path, index_dir: Path) -> None:
        self.records = Path(records)
        self.index_dir = Path(index_dir)
        self.index_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.index_dir / INDEX_FILE
        self._db = IndexDb(self.path)
        self._indexer = Indexer(self.records, self._db)
        self._rows = RowReader(self._db)
        self._indexed: tuple[int, bytes] | None = None  # what the cached answers were over
        self._cache: dict[tuple[Any, ...], Any] = {}

    def refresh(self) -> int:
        """Index the lines appended since the last refresh; returns how many were added.

        A last line without its newline is still being written and waits for the next call;
        a complete line that is not a JSON object is counted in ``skipped`` and passed over.
        A records file that shrank or whose first bytes changed is indexed from scratch."""
        with self._db.lock:
            added = self._indexer.refresh()
            indexed = self._indexer.indexed
            if indexed != self._indexed:  # grown here or by another process: answers are old
                self._cache.clear()
                self._indexed = indexed
            return added

    def close(self) -> None:
        self._db.close()

    # -- reading -----------------------------------------------------------------------------
    def _cached(self, key: tuple[Any, ...], compute: Callable[[], T]) -> T:
        with self._db.lock:
            if key not in self._cache:
                if len(self._cache) > 256:
                    self._cache.clear()
                self._cache[key] = compute()
            return self._cache[key]

    @property
    def generation(self) -> tuple[Any, ...]:
        """Changes whenever the index grows or is rebuilt (a key for caches over it)."""
        return (id(self), self._indexed)

    @property
    def skipped(self) -> int:
        """Complete lines that were not a JSON object."""
        return int(self._db.meta("skipped") or 0)

    def count(self, filters: Filters | None = None) -> int:
        filters = filters or Filters()

        def compute() -> int:
            clauses, args = filters.clauses()
            return self._db.query(f"SELECT COUNT(*) FROM rollouts r{where(clauses)}", args)[0][0]

        return self._cached(("count", filters.key()), compute)

    def rows(
        self,
        filters: Filters | None = None,
        sort: str = "line",
        descending: bool = False,
        offset: int = 0,
        limit: int = 50,
        metrics: list[str] | None = None,
    ) -> list[Row]:
        """A page of rollouts, with the values of `metrics` (all of the run's, by default).

        Rows with the sort value missing come last either way; ties follow the line in the
        sort's direction (so the page is a walk along the column's index, never a sort)."""
        return self._rows.page(filters, sort, descending, offset, limit, metrics)

    def row(self, line: int) -> Row | None:
        return self._rows.one(line)

    def record(self, line: int) -> dict[str, Any]:
        """The full record of one indexed line (one seek, one read)."""
        found = self._db.query("SELECT offset, length FROM rollouts WHERE line = ?", (line,))
        if not found:
            raise KeyError(line)
        offset, length = found[0]
        with open(self.records, "rb") as f:
            f.seek(offset)
            return orjson.loads(f.read(length))

    def example_lines(self, example_id: Any, limit: int = 64) -> list[Row]:
        """The rollouts of one example (its group), in rollout order."""
        return self.rows(Filters(example=str(example_id)), sort="line", limit=limit)

    def metric_names(self) -> list[str]:
        return [name for name, _ in self._facet("metric", order_by="value")]

    def distinct(self, column: str) -> list[tuple[Any, int]]:
        """Values of an indexed column (error, stop, member) with their counts, most first."""
        if column not in FACETS:
            raise ValueError(column)
        return self._facet(column, order_by="n DESC, value")

    def _facet(self, kind: str, order_by: str) -> list[tuple[Any, int]]:
        return [
            (v, n)
            for v, n in self._db.query(
                f"SELECT value, n FROM facets WHERE kind = ? ORDER BY {order_by}", (kind,)
            )
        ]

    def reward_histogram(self, filters: Filters | None = None, bins: int = 20) -> Histogram:
        """Counts of finite rewards in `bins` equal bins between the lowest and highest."""
        filters = filters or Filters()
        return self._cached(
            ("hist", filters.key(), bins), lambda: reward_histogram(self._db, filters, bins)
        )

    def summary(self, filters: Filters | None = None) -> dict[str, Any]:
        """Rollouts, failed and scored rollouts, and the mean reward over the scored ones."""
        filters = filters or Filters()

        def compute() -> dict[str, Any]:
            clauses, args = filters.clauses()
            total, failed, scored, mean = self._db.query(
                "SELECT COUNT(*), COUNT(r.error), "
                "COUNT(CASE WHEN r.error IS NULL THEN r.reward END), "
                f"AVG(CASE WHEN r.error IS NULL THEN r.reward END) FROM rollouts r{where(clauses)}",
                args,
            )[0]
            return {"rollouts": total, "failed": failed, "scored": scored, "mean_reward": mean}

        return self._cached(("summary", filters.key()), compute)

    def by_member(self, owners: Mapping[str, list[str]] | None = None) -> list[dict[str, Any]]:
        """Per member: rollouts, mean reward and each metric's mean over that member's scored
        rollouts; with `owners` (member → the metrics it records) only the owned metrics,
        since a group fills other members' metrics with 0.0."""
        key = ("members", tuple(sorted((k, tuple(v)) for k, v in (owners or {}).items())))
        return self._cached(key, lambda: member_means(self._db, owners))

    def example_means(self) -> dict[Any, tuple[float | None, int]]:
        """Per example: mean reward over its rollouts (a rollout without a finite reward, a
        failed one, counts 0) and how many rollouts it has."""
        return self._cached(
            ("examples",),
            lambda: {
                ex: (mean, n)
                for ex, mean, n in self._db.query(
                    "SELECT example_id, AVG(COALESCE(reward, 0.0)), COUNT(*) FROM rollouts "
                    "GROUP BY example_id"
                )
            },
        )

    def has_example(self, example: Any) -> bool:
        values = example_key(example)
        marks = ", ".join("?" * len(values))
        return bool(
            self._db.query(f"SELECT 1 FROM rollouts WHERE example_id IN ({marks}) LIMIT 1", values)
        )

    def iter_lines(self) -> Iterator[int]:
        for (line,) in self._db.query("SELECT line FROM rollouts ORDER BY line"):
            yield line
