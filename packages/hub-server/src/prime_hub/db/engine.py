"""Engines and session factories for a database URL.

SQLite gets two engines on the same file: reads begin deferred transactions, writes begin with
``BEGIN IMMEDIATE`` so concurrent writers queue on the busy timeout instead of failing on a
lock upgrade. PostgreSQL uses one engine for both.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

from .counter import CounterReader, own_connection


def _sqlite_engine(url: str, begin: str) -> Engine:
    engine = create_engine(
        url, connect_args={"check_same_thread": False, "timeout": 30}, pool_size=10
    )

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_conn, _record):  # type: ignore[no-untyped-def]
        dbapi_conn.isolation_level = None  # autocommit at the driver; BEGIN issued below
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn):  # type: ignore[no-untyped-def]
        conn.exec_driver_sql(begin)

    return engine


class _Kept:
    """A thread's own read connection (None once closed) and whether a cursor is open on it."""

    __slots__ = ("__weakref__", "busy", "conn")

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.busy = False


class _ThreadConnections:
    """SQLite's read cursors: each thread reads on a driver connection of its own, kept
    outside the pool (as `CounterReader` keeps the counter's). A pool checkout and return
    (SQLAlchemy's connection record, its events, the reset on return) cost ~0.15 ms more
    on a listing rebuild whose caches are cold (0.19 against 0.045 ms measured), a sixth of
    the owner page's SQL, while opening a SQLite connection is only a file open (and a
    SQLite read never waits on another's): a thread keeps its connection until it ends
    (a worker thread's pass, the event loop's for good) or until `close`. A nested use on
    one thread, or a connection that failed, falls back to (or is replaced by) a new one."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._local = threading.local()
        self._all: weakref.WeakSet[_Kept] = weakref.WeakSet()  # to close them at dispose

    @contextmanager
    def cursor(self) -> Iterator[Any]:
        kept: _Kept | None = getattr(self._local, "kept", None)
        nested = kept is not None and kept.busy
        if nested:  # the thread's connection is in a transaction: one for this use only
            kept = _Kept(own_connection(self.engine))
        elif kept is None or kept.conn is None:
            kept = self._local.kept = _Kept(own_connection(self.engine))
            self._all.add(kept)
        conn, kept.busy = kept.conn, True  # autocommit at the driver (_sqlite_engine)
        try:
            cur = conn.cursor()
            try:
                cur.execute("BEGIN")
                yield cur
            finally:
                cur.close()
                conn.rollback()
        except self.engine.dialect.loaded_dbapi.Error:
            kept.conn = None  # the next use opens another
            conn.close()
            raise
        finally:
            kept.busy = False
            if nested:
                conn.close()

    def close(self) -> None:
        for kept in list(self._all):
            conn, kept.conn = kept.conn, None
            if conn is not None:
                conn.close()


@dataclass
class Database:
    url: str
    read_engine: Engine
    write_engine: Engine
    reader: sessionmaker[Session]
    writer: sessionmaker[Session]
    # the change counter on a connection of its own, for the event loop (`counter`)
    counter: CounterReader = field(init=False)
    # SQLite's read cursors, a connection per thread (`read_cursor`)
    _thread_connections: _ThreadConnections = field(init=False)

    def __post_init__(self) -> None:
        self.counter = CounterReader(self.read_engine)
        self._thread_connections = _ThreadConnections(self.read_engine)

    @property
    def is_sqlite(self) -> bool:
        return self.url.startswith("sqlite")

    def read_cursor(self) -> AbstractContextManager[Any]:
        """A driver cursor in a read transaction of its own (one snapshot for all its
        statements), for statements compiled to the driver's SQL
        (`core.queries.DriverStatement`): a listing's few queries without SQLAlchemy's
        per-statement execution machinery, which cost as much as their SQL on SQLite. On
        SQLite the cursor is on the calling thread's own connection (`_ThreadConnections`),
        elsewhere on a pooled one."""
        if self.is_sqlite:
            return self._thread_connections.cursor()
        return self._pooled_cursor()

    @contextmanager
    def _pooled_cursor(self) -> Iterator[Any]:
        conn = self.read_engine.raw_connection()
        try:
            cur = conn.cursor()
            try:
                yield cur
            finally:
                cur.close()
                conn.rollback()
        finally:
            conn.close()

    def dispose(self) -> None:
        self.counter.close()
        self._thread_connections.close()
        self.read_engine.dispose()
        if self.write_engine is not self.read_engine:
            self.write_engine.dispose()


def open_database(url: str) -> Database:
    if url.startswith("sqlite"):
        read = _sqlite_engine(url, "BEGIN")
        write = _sqlite_engine(url, "BEGIN IMMEDIATE")
    else:
        read = write = create_engine(url, pool_size=20, max_overflow=20, pool_pre_ping=True)
    return Database(
        url=url,
        read_engine=read,
        write_engine=write,
        reader=sessionmaker(read, expire_on_commit=False),
        writer=sessionmaker(write, expire_on_commit=False),
    )
