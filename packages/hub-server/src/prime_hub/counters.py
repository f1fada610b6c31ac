"""Download counts, batched: downloads never wait on a database write.

Counts are kept in memory and written by a background thread about once a second (and at
shutdown); a crash can lose at most that last second of counts, never a download.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable


class DownloadCounter:
    def __init__(self, flush: Callable[[dict[tuple[int, int], int]], None], interval: float = 1.0):
        self._flush_fn = flush
        self._interval = interval
        self._pending: Counter[tuple[int, int]] = Counter()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stopped = False
        self._thread: threading.Thread | None = None

    def add(self, file_id: int, env_id: int) -> None:
        with self._lock:
            self._pending[(file_id, env_id)] += 1
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="download-counts", daemon=True
                )
                self._thread.start()

    def flush(self) -> None:
        with self._lock:
            batch, self._pending = dict(self._pending), Counter()
        if batch:
            try:
                self._flush_fn(batch)
            except Exception:  # counts are best effort; put them back for the next try
                with self._lock:
                    self._pending.update(batch)

    def _run(self) -> None:
        while not self._stopped:
            self._wake.wait(self._interval)
            self.flush()

    def close(self) -> None:
        self._stopped = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join(5)
        self.flush()
