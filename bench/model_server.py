"""The scripted model server (`python -m verifiers.testing serve`) as a child process, for the
benchmarks that run rollouts against it (bench/ray, bench/serve, bench/training).

A benchmark puts bench/ on sys.path and calls `start_model_server()`; it stops the process
itself (`terminate()`) when its measurements are done.
"""

from __future__ import annotations

import subprocess
import sys


def start_model_server() -> tuple[subprocess.Popen[str], str]:
    """Start the server on a free loopback port (0 ms latency, arithmetic replies) and return the process and its base URL, read from the ``READY <base URL>`` line it prints
    once listening. Its stderr stays the benchmark's (a pipe nobody reads could fill and stall
    it), so a server that fails to start has said why just above the error raised here."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "verifiers.testing", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line.startswith("READY "):
        proc.kill()
        raise RuntimeError(f"scripted server did not start: {line!r}")
    return proc, line.split(" ", 1)[1]
