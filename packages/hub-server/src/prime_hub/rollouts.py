"""The rollouts of an evaluation run: received as a stream, stored gzip-compressed, read
back through a local cache and the viewer's index.

A push (``PUT .../evals/{id}/rollouts``) is the run's ``results.jsonl``, plain or
``Content-Encoding: gzip``. While it streams in, each line is checked to be a JSON object
(else 400 naming the line), the uncompressed bytes are counted against
``max_rollouts_bytes`` (413 the moment they pass it, however well the body compresses), and
the body goes to a spool file (a gzip body as sent, a plain one compressed here) that then
goes to the artifact store in one piece. Nothing is held in memory beyond one line.

Reading never loads the whole object per request: the first reader of a pushed run
decompresses it once into ``<data dir>/rollouts-cache/`` (atomically: written aside, then
renamed) and the viewer's ``RolloutIndex`` beside it answers every page and API call.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
import threading
import zlib
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import select
from verifiers_viewer import RolloutIndex

from .auth import Principal
from .db.models import EvalResult
from .errors import BadRequest, Forbidden, NotFound, TooLarge, Unauthorized
from .service import Hub
from .uploads import SpoolDir

CACHE_DIR = "rollouts-cache"
RECORDS_FILE = "results.jsonl"
GZIP_WBITS = 31  # zlib's gzip container
GZIP_LEVEL = 3  # zlib's fast levels: JSON still shrinks several times, at 2-3x the speed of 6
_CHUNK = 256 * 1024
OPEN_INDEXES = 64  # indexes (one SQLite connection each) kept open, most recently used


def rollouts_key(env_id: int, eval_id: int, sha256: str) -> str:
    """Only integers and a hex digest: nothing a client sends reaches a storage path."""
    return f"rollouts/{env_id}/{eval_id}/{sha256}.jsonl.gz"


class GzipReader:
    """Inflates a gzip stream fed in pieces, member after member (``cat a.gz b.gz`` is one
    valid gzip file), yielding at most ``_CHUNK`` bytes at a time: a small compressed piece
    can hold a great deal."""

    def __init__(self) -> None:
        self._inflate = zlib.decompressobj(GZIP_WBITS)

    def feed(self, data: bytes) -> Iterator[bytes]:
        while data:
            if self._inflate.eof:
                self._inflate = zlib.decompressobj(GZIP_WBITS)
            out = self._inflate.decompress(data, _CHUNK)
            if out:
                yield out
            data = self._inflate.unconsumed_tail or self._inflate.unused_data

    @property
    def complete(self) -> bool:
        return self._inflate.eof


class RolloutSink:
    """Takes a pushed body chunk by chunk: checks every line is a JSON object and counts the
    uncompressed bytes against ``limit``, writing what is to be stored to ``dest``: a gzip body
    as it was sent (checked by inflating it on the way; no second compression), a plain one
    gzip-compressed here. ``finish()`` returns (records, bytes, stored bytes, sha256 of the
    uncompressed content)."""

    def __init__(self, dest: Path, limit: int, gzipped: bool) -> None:
        self.dest = dest
        self.limit = limit
        self._reader = GzipReader() if gzipped else None
        self._deflate = None if gzipped else zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, GZIP_WBITS)
        self._out = open(dest, "wb")
        self._pending = b""
        self._digest = hashlib.sha256()
        self.lines = 0  # lines seen (numbering for errors, blank ones included)
        self.records = 0
        self.size = 0  # uncompressed bytes to be stored

    def feed(self, chunk: bytes) -> None:
        if self._reader is None:
            self._take(chunk)
            return
        self._out.write(chunk)
        try:
            for data in self._reader.feed(chunk):
                self._count(data)
                self._take(data)
        except zlib.error as e:
            raise BadRequest(f"the rollouts body is not valid gzip: {e}") from None

    def _count(self, data: bytes) -> None:
        self.size += len(data)
        if self.size > self.limit:
            self._too_large()
        self._digest.update(data)

    def _take(self, data: bytes) -> None:
        if not data:
            return
        buf = self._pending + data
        if len(buf) > self.limit + 1:  # one line alone can pass the cap: no need to wait for it
            self._too_large()
        end = buf.rfind(b"\n")
        if end < 0:
            self._pending = buf
            return
        self._pending = buf[end + 1 :]
        for line in buf[:end].split(b"\n"):
            self._line(line)

    def _line(self, line: bytes) -> None:
        self.lines += 1
        if not line.strip():
            return  # a blank line carries no record
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError as e:
            raise BadRequest(f"rollouts line {self.lines} is not JSON: {e}") from None
        if not isinstance(value, dict):
            raise BadRequest(
                f"rollouts line {self.lines} is a JSON {type(value).__name__}, not an object"
            )
        self.records += 1
        if self._deflate is not None:  # a plain body is stored record by record
            record = line.rstrip(b"\r") + b"\n"
            self._count(record)
            self._out.write(self._deflate.compress(record))

    def _too_large(self) -> None:
        raise TooLarge(
            f"the rollouts exceed this hub's limit of {self.limit} bytes uncompressed "
            "(max_rollouts_bytes)"
        )

    def finish(self) -> tuple[int, int, int, str]:
        if self._reader is not None and not self._reader.complete:
            raise BadRequest("the rollouts body ended in the middle of its gzip stream")
        if self._pending:  # the last line had no newline: it is a record all the same
            line, self._pending = self._pending, b""
            self._line(line)
            if self._deflate is None:  # end the stored text with one (a member of its own)
                self._count(b"\n")
                self._out.write(gzip.compress(b"\n"))
        if self.records == 0:
            raise BadRequest("the rollouts body holds no records")
        if self._deflate is not None:
            self._out.write(self._deflate.flush())
        self._out.close()
        return self.records, self.size, self.dest.stat().st_size, self._digest.hexdigest()

    def close(self) -> None:
        if not self._out.closed:
            self._out.close()


@dataclass(frozen=True)
class LocalRollouts:
    """A pushed run's records on this server's disk, and where its index lives."""

    records: Path
    index_dir: Path


class RolloutStore:
    """Pushing, finding and reading rollouts; one per application (``app.state.rollouts``)."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self.cache_root = (hub.settings.data_dir / CACHE_DIR).resolve()
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()
        self._indexes: OrderedDict[Path, RolloutIndex] = OrderedDict()
        self._indexes_guard = threading.Lock()

    # -- which evaluation, for whom -----------------------------------------------------------
    def readable(
        self, principal: Principal, eval_id: int, owner: str | None = None, name: str | None = None
    ) -> EvalResult:
        """The evaluation with pushed rollouts, if ``principal`` may read its environment
        (the hub's one read rule, ``get_environment``); otherwise NotFound, whether it does
        not exist, has no rollouts or is private to others. With ``owner``/``name`` it must
        also belong to that environment."""
        env = self.hub.queries.get_environment(principal, owner, name) if owner and name else None
        missing = NotFound(f"evaluation {eval_id} has no rollouts here")
        with self.hub.db.reader() as s:
            row = s.get(EvalResult, eval_id)
        if row is None or row.rollouts_key is None:
            raise missing
        if env is not None:
            if env.id != row.environment_id:
                raise missing
            return row
        try:
            self.hub.queries.get_environment_by_id(principal, row.environment_id)
        except NotFound:
            raise missing from None
        return row

    def recent_readable(self, principal: Principal, limit: int = 200) -> list[EvalResult]:
        """Evaluations with rollouts that ``principal`` may read, newest first."""
        query = (
            select(EvalResult)
            .where(EvalResult.rollouts_key.is_not(None))
            .order_by(EvalResult.created_at.desc(), EvalResult.id.desc())
            .limit(limit * 4)
        )
        with self.hub.db.reader() as s:
            rows = list(s.scalars(query).unique())
        return [r for r in rows if principal.can_read(r.environment)][:limit]

    # -- pushing ------------------------------------------------------------------------------
    def check_push(self, principal: Principal, owner: str, name: str, eval_id: int) -> EvalResult:
        """Before the body is read: the evaluation exists in this environment, and the
        caller, its submitter, holds a publish-scoped token that covers the environment."""
        env = self.hub.queries.get_environment(principal, owner, name)
        if principal.user is None:
            raise Unauthorized("pushing rollouts needs an API token")
        with self.hub.db.reader() as s:
            row = s.get(EvalResult, eval_id)
        if row is None or row.environment_id != env.id:
            raise NotFound(f"evaluation {eval_id} of {owner}/{name} not found")
        if not principal.can_submit_eval(env):
            raise Forbidden(
                f"this token may not push rollouts to {owner}/{name} (needs publish scope)"
            )
        if row.submitter_id != principal.user.id:
            raise Forbidden(f"only the submitter of evaluation {eval_id} may push its rollouts")
        return row

    def spool(self) -> SpoolDir:
        return SpoolDir(self.hub.settings)

    def sink(self, spool: Path, gzipped: bool) -> RolloutSink:
        return RolloutSink(
            spool / "rollouts.jsonl.gz", self.hub.settings.max_rollouts_bytes, gzipped
        )

    def attach(self, row: EvalResult, sink: RolloutSink) -> EvalResult:
        """Store what ``sink`` received and link it to the evaluation (replacing rollouts
        pushed before, whose object is removed once nothing points at it)."""
        records, size, stored, sha256 = sink.finish()
        key = rollouts_key(row.environment_id, row.id, sha256)
        self.hub.storage.put_file(key, sink.dest)
        with self.hub.db.writer.begin() as s:
            current = s.get(EvalResult, row.id)
            if current is None:  # deleted while the body streamed in
                self.hub.storage.delete(key)
                raise NotFound(f"evaluation {row.id} was deleted during the push")
            old = current.rollouts_key
            current.rollouts_key = key
            current.rollouts_count = records
            current.rollouts_bytes = size
            current.rollouts_stored_bytes = stored
            current.rollouts_sha256 = sha256
        if old and old != key:
            self.hub.storage.delete(old)
        with self.hub.db.reader() as s:
            fresh = s.get(EvalResult, row.id)
            assert fresh is not None
            return fresh

    def forget(self, key: str | None) -> None:
        """The stored object of deleted rollouts (the evaluation is gone)."""
        if key:
            self.hub.storage.delete(key)

    # -- reading ------------------------------------------------------------------------------
    def paths(self, row: EvalResult) -> LocalRollouts:
        """Where the records of a pushed run are (or will be) cached on this server."""
        assert row.rollouts_key and row.rollouts_sha256
        folder = self.cache_root / str(row.id) / row.rollouts_sha256
        return LocalRollouts(folder / RECORDS_FILE, folder)

    def local(self, row: EvalResult) -> LocalRollouts:
        """The records decompressed on this server (once per pushed object)."""
        assert row.rollouts_key
        paths = self.paths(row)
        folder, records = paths.index_dir, paths.records
        if not records.is_file():
            with self._lock_for(str(folder)):
                if not records.is_file():
                    self._decompress(row.rollouts_key, folder, records)
        return paths

    def _lock_for(self, name: str) -> threading.Lock:
        with self._locks_guard:
            return self._locks.setdefault(name, threading.Lock())

    def _decompress(self, key: str, folder: Path, records: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".records-")
        try:
            reader = GzipReader()
            with os.fdopen(fd, "wb") as out:
                for chunk in self.hub.storage.iter_bytes(key):
                    for data in reader.feed(chunk):
                        out.write(data)
            os.replace(tmp, records)  # another process may have done the same: same bytes
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def index(self, row: EvalResult) -> RolloutIndex:
        """The viewer's index of a pushed run (built at its first use)."""
        local = self.local(row)
        with self._indexes_guard:
            index = self._indexes.get(local.index_dir)
            if index is not None:
                self._indexes.move_to_end(local.index_dir)
                return index
        index = RolloutIndex(local.records, local.index_dir)
        index.refresh()  # the records never change once pushed: one refresh is all
        with self._indexes_guard:
            self._indexes[local.index_dir] = index
            while len(self._indexes) > OPEN_INDEXES:
                self._indexes.popitem(last=False)  # closed when the last user lets go
        return index


def rollouts_summary(row: EvalResult) -> dict[str, Any] | None:
    """What an evaluation's view says about its rollouts (None: none pushed)."""
    if row.rollouts_key is None:
        return None
    return {
        "count": row.rollouts_count,
        "bytes": row.rollouts_bytes,
        "stored_bytes": row.rollouts_stored_bytes,
        "sha256": row.rollouts_sha256,
        "viewer": f"/evals/runs/{row.id}",
    }
