"""`Database.read_cursor` on SQLite: each thread reads on a connection of its own, kept
outside the pool (`prime_hub.db.engine._ThreadConnections`). What must hold for that to be
safe: every use is a fresh snapshot (it sees every commit made before it), a nested use, a
failed statement, a thread's end and `Database.dispose` each leave no connection in a bad
state or open behind the hub's back."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from prime_hub.db.engine import Database, open_database


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = open_database(f"sqlite:///{tmp_path / 'hub.db'}")
    with database.write_engine.begin() as conn:
        conn.execute(text("CREATE TABLE t (n INTEGER)"))
        conn.execute(text("INSERT INTO t VALUES (1)"))
    yield database
    database.dispose()


def _write(db: Database, n: int) -> None:
    with db.write_engine.begin() as conn:
        conn.execute(text("UPDATE t SET n = :n"), {"n": n})


def _read(db: Database) -> tuple[int, sqlite3.Connection]:
    with db.read_cursor() as cur:
        return cur.execute("SELECT n FROM t").fetchone()[0], cur.connection


def test_a_thread_keeps_one_connection_outside_the_pool_and_sees_every_commit(db):  # type: ignore[no-untyped-def]
    first, conn = _read(db)
    assert first == 1
    for n in (2, 3):
        _write(db, n)  # another connection commits between two reads of this thread
        assert _read(db) == (n, conn)  # the same connection, a new snapshot each time
    assert db.read_engine.pool.checkedout() == 0  # type: ignore[attr-defined]
    assert conn.in_transaction is False  # nothing held open between uses (WAL checkpoints)


def test_one_use_is_one_snapshot(db):  # type: ignore[no-untyped-def]
    with db.read_cursor() as cur:
        assert cur.execute("SELECT n FROM t").fetchone()[0] == 1
        _write(db, 7)
        assert cur.execute("SELECT n FROM t").fetchone()[0] == 1  # a listing's queries agree
    assert _read(db)[0] == 7


def test_threads_read_on_their_own_connections(db):  # type: ignore[no-untyped-def]
    seen: dict[str, sqlite3.Connection] = {}
    _, seen["main"] = _read(db)

    def other() -> None:
        _, seen["other"] = _read(db)
        assert _read(db)[1] is seen["other"]

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen["other"] is not seen["main"]


def test_a_nested_use_reads_on_another_connection_closed_after_it(db):  # type: ignore[no-untyped-def]
    with db.read_cursor() as outer:
        assert outer.execute("SELECT n FROM t").fetchone()[0] == 1
        with db.read_cursor() as inner:
            nested = inner.connection
            assert nested is not outer.connection
            assert inner.execute("SELECT n FROM t").fetchone()[0] == 1
        with pytest.raises(sqlite3.ProgrammingError):
            nested.execute("SELECT 1")  # closed: not kept, not leaked
        assert outer.execute("SELECT n FROM t").fetchone()[0] == 1  # still in its transaction
        kept = outer.connection
    assert _read(db)[1] is kept


def test_a_failed_statement_costs_the_connection_not_the_next_read(db):  # type: ignore[no-untyped-def]
    _, before = _read(db)
    with pytest.raises(sqlite3.OperationalError), db.read_cursor() as cur:
        cur.execute("SELECT nope FROM t")
    with pytest.raises(sqlite3.ProgrammingError):
        before.execute("SELECT 1")  # dropped and closed
    value, after = _read(db)
    assert value == 1 and after is not before


def test_an_error_of_the_caller_keeps_the_connection_and_ends_the_transaction(db):  # type: ignore[no-untyped-def]
    with pytest.raises(KeyError), db.read_cursor() as cur:
        cur.execute("SELECT n FROM t").fetchone()
        kept = cur.connection
        raise KeyError("the caller's own failure (a 404)")
    assert kept.in_transaction is False
    assert _read(db)[1] is kept


def test_dispose_closes_every_threads_connection_and_reading_reconnects(db):  # type: ignore[no-untyped-def]
    _, main = _read(db)
    ready, done = threading.Event(), threading.Event()
    seen: list[sqlite3.Connection] = []

    def worker() -> None:  # a thread still alive at dispose, as the loop's is
        seen.append(_read(db)[1])
        ready.set()
        done.wait(10)

    t = threading.Thread(target=worker)
    t.start()
    assert ready.wait(10)
    try:
        db.dispose()
        for conn in (main, seen[0]):
            with pytest.raises(sqlite3.ProgrammingError):
                conn.execute("SELECT 1")
    finally:
        done.set()
        t.join()
    value, fresh = _read(db)
    assert value == 1 and fresh is not main


def test_a_finished_threads_connection_goes_with_it(db):  # type: ignore[no-untyped-def]
    connections = db._thread_connections
    _read(db)
    t = threading.Thread(target=_read, args=(db,))
    t.start()
    t.join()
    assert len(connections._all) == 1  # the main thread's; the worker's went with the worker
