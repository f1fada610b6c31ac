"""The change counter (`HubState.generation`) read on a connection of its own.

The hub's caches read the counter through it (`HubContext.generation`): the listing cache on
every listing request, the index pages at most once a second. Through the pool in a worker
thread that read costs a thread hop and a pool checkout, about 0.3-0.5 ms on a busy 2-core
machine, more than the read itself (a primary-key lookup of one row: ~20 us on SQLite, one
loopback round trip on PostgreSQL). `CounterReader` keeps one autocommit driver connection
outside the pool, so the event loop can read on it directly (`now`): it never waits for a
pooled connection, and each read sees every committed change. Connecting (the first read,
or after the connection broke) may wait on the network, so it happens in a worker thread.
The hub reads on the loop only on SQLite (`create_asgi`): on PostgreSQL every read waits on
the network, and a server that stops answering would freeze the loop, so reads there stay
in worker threads (on the same kept connection, still without a pool checkout).
"""

from __future__ import annotations

import threading
from typing import Any

from sqlalchemy import Engine, select

from .models import HubState


def own_connection(engine: Engine) -> Any:
    """A driver connection of ``engine``'s, taken out of its pool: never returned to (or
    counted by) the pool, closed by whoever keeps it. Connecting may wait on the network."""
    pooled = engine.raw_connection()
    pooled.detach()
    driver = pooled.dbapi_connection
    assert driver is not None
    return driver


class CounterReader:
    """``reader()`` -> the current generation, connecting when needed (blocking: call it in
    a worker thread); reconnects once on a broken connection (a database restart), else
    raises the driver's error. ``reader.now()`` -> the generation read on the connection
    already open, or None when there is none or the read failed (the connection is then
    dropped): the event loop's call, which never waits for a connect. Thread-safe."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        # compiled once, values inlined: the raw connection bypasses SQLAlchemy's execution
        self.statement = str(
            select(HubState.generation)
            .where(HubState.id == 1)
            .compile(dialect=engine.dialect, compile_kwargs={"literal_binds": True})
        )
        self._conn: Any = None
        self._lock = threading.Lock()
        self.reads = 0  # for tests: how often the counter was read

    def __call__(self) -> int:
        with self._lock:
            try:
                return self._read()
            except self.engine.dialect.loaded_dbapi.Error:
                self._drop()
                return self._read()  # a fresh connection; a second failure is the caller's

    def now(self) -> int | None:
        # never blocks on the lock either: a thread holding it may be connecting
        if self._conn is None or not self._lock.acquire(blocking=False):
            return None
        try:
            if self._conn is None:
                return None
            return self._read()
        except self.engine.dialect.loaded_dbapi.Error:
            self._drop()
            return None
        finally:
            self._lock.release()

    def close(self) -> None:
        with self._lock:
            self._drop()

    def _read(self) -> int:
        self.reads += 1
        if self._conn is None:
            driver = own_connection(self.engine)
            self.engine.dialect.set_isolation_level(driver, "AUTOCOMMIT")
            self._conn = driver
        cur = self._conn.cursor()
        try:
            cur.execute(self.statement)
            row = cur.fetchone()
        finally:
            cur.close()
        return int(row[0]) if row and row[0] is not None else 0

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except self.engine.dialect.loaded_dbapi.Error:
                pass  # a broken connection may fail to close; it is gone either way
