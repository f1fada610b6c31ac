"""The SQLite file of a run's index: its schema, one connection shared between threads behind
a lock, and the `meta` key/value table."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

INDEX_FILE = "rollouts-index.sqlite"
SCHEMA_VERSION = "3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS rollouts (
    line INTEGER PRIMARY KEY,      -- 0-based number of the record among the indexed records
    offset INTEGER NOT NULL,
    length INTEGER NOT NULL,
    example_id,                    -- no affinity: an int stays an int, a string a string
    rollout_index INTEGER,
    reward REAL,                   -- NULL when not finite
    error TEXT,                    -- the error's type; NULL when none
    stop TEXT,
    member TEXT,                   -- the EnvGroup / mixture member
    turns INTEGER,
    input_tokens INTEGER,
    output_tokens INTEGER,
    parsed_answer TEXT,
    answer TEXT
);
CREATE TABLE IF NOT EXISTS metrics (
    line INTEGER NOT NULL, name TEXT NOT NULL, value REAL,
    PRIMARY KEY (line, name)
) WITHOUT ROWID;
-- Counts of each error type, stop condition, member and metric name, kept as lines are added
-- (the filter menus would otherwise scan the run on every page).
CREATE TABLE IF NOT EXISTS facets (
    kind TEXT NOT NULL, value TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (kind, value)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS rollouts_reward ON rollouts (reward);
CREATE INDEX IF NOT EXISTS rollouts_example ON rollouts (example_id);
CREATE INDEX IF NOT EXISTS rollouts_error ON rollouts (error);
CREATE INDEX IF NOT EXISTS rollouts_stop ON rollouts (stop);
CREATE INDEX IF NOT EXISTS rollouts_member ON rollouts (member);
CREATE INDEX IF NOT EXISTS rollouts_turns ON rollouts (turns);
CREATE INDEX IF NOT EXISTS rollouts_input_tokens ON rollouts (input_tokens);
CREATE INDEX IF NOT EXISTS rollouts_output_tokens ON rollouts (output_tokens);
CREATE INDEX IF NOT EXISTS metrics_value ON metrics (name, value);
"""


def meta(db: sqlite3.Connection, key: str) -> str | None:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def _meta_or_none(db: sqlite3.Connection, key: str) -> str | None:
    try:
        return meta(db, key)
    except sqlite3.OperationalError:  # a new file: no tables yet
        return None


class IndexDb:
    """`path`'s connection (WAL, so several processes may share the file); a file of another
    schema version is removed and built anew."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.RLock()
        self.conn = self._open()

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        if _meta_or_none(db, "schema") not in (None, SCHEMA_VERSION):
            db.close()
            self._remove_files()
            return self._open()
        db.executescript(_SCHEMA)
        return db

    def _remove_files(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            Path(str(self.path) + suffix).unlink(missing_ok=True)

    def meta(self, key: str) -> str | None:
        with self.lock:
            return meta(self.conn, key)

    def query(self, sql: str, args: list[Any] | tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self.lock:
            return self.conn.execute(sql, args).fetchall()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """An immediate transaction (the writer lock at once), rolled back on any error."""
        with self.lock:
            db = self.conn
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def close(self) -> None:
        with self.lock:
            self.conn.close()
