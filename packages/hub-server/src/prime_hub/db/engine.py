"""Engines and session factories for a database URL.

SQLite gets two engines on the same file: reads begin deferred transactions, writes begin with
``BEGIN IMMEDIATE`` so concurrent writers queue on the busy timeout instead of failing on a
lock upgrade. PostgreSQL uses one engine for both.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

from .counter import CounterReader


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


@dataclass
class Database:
    url: str
    read_engine: Engine
    write_engine: Engine
    reader: sessionmaker[Session]
    writer: sessionmaker[Session]
    # the change counter on a connection of its own, for the event loop (`counter`)
    counter: CounterReader = field(init=False)

    def __post_init__(self) -> None:
        self.counter = CounterReader(self.read_engine)

    @property
    def is_sqlite(self) -> bool:
        return self.url.startswith("sqlite")

    @contextmanager
    def read_cursor(self) -> Iterator[Any]:
        """A driver cursor on a pooled read connection, in a read transaction of its own
        (one snapshot for all its statements), for statements compiled to the driver's SQL
        (`core.queries.DriverStatement`): a listing's few queries without SQLAlchemy's
        per-statement execution machinery, which cost as much as their SQL on SQLite."""
        conn = self.read_engine.raw_connection()
        try:
            cur = conn.cursor()
            try:
                if self.is_sqlite:  # autocommit at the driver (see _sqlite_engine)
                    cur.execute("BEGIN")
                yield cur
            finally:
                cur.close()
                conn.rollback()
        finally:
            conn.close()

    def dispose(self) -> None:
        self.counter.close()
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
