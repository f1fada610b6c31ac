"""Loopback ports for tests and demos that start servers: a free one to give a server, and
waiting until the server listens on it."""

from __future__ import annotations

import socket
import subprocess
import time

__all__ = ["free_port", "wait_listening"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listened on a moment ago (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_listening(
    port: int, process: subprocess.Popen[bytes] | None = None, timeout: float = 20.0
) -> None:
    """Return once something accepts connections on 127.0.0.1:`port`.

    Raises `RuntimeError` when `process` (the server waited for) exits first, and
    `TimeoutError` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(
                f"process exited with {process.returncode} before listening on {port}"
            )
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout}s")
