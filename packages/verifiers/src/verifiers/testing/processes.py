"""Whether processes a test started have gone: for pools, servers and their workers, which
may be grandchildren (not ours to wait for) and may linger as zombies until reaped; and
stopping a server process a test started."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

__all__ = ["gone", "stop", "wait_gone"]


def gone(pid: int) -> bool:
    """Not running: no /proc entry, or a zombie about to be reaped by its parent."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):  # ESRCH: it exited while we read
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def wait_gone(pids: list[int], limit: float = 15.0) -> bool:
    """True as soon as every pid has gone; False if one is still running after ``limit`` s
    (generous: a worker told to stop on a loaded 2-core machine can take seconds to exit)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if all(gone(p) for p in pids):
            return True
        time.sleep(0.02)
    return False


def stop(process: multiprocessing.process.BaseProcess) -> None:
    """Stop a started process: SIGTERM and up to 15 s to shut down cleanly, then SIGKILL."""
    if process.is_alive():
        process.terminate()
        process.join(15)
    if process.is_alive():
        process.kill()
        process.join(5)
