"""`verifiers.testing.free_port` / `wait_listening`: the loopback port helpers the hub's test
kit, the cross-package end-to-end kit and `make demo` share (issue 29 item 5)."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from verifiers.testing import free_port, wait_listening


def test_a_free_port_can_be_listened_on_and_waiting_returns_once_it_is():
    port = free_port()
    with socket.socket() as server:
        server.bind(("127.0.0.1", port))
        server.listen()
        wait_listening(port, timeout=5)


def test_a_server_that_exits_first_is_reported_not_waited_for():
    exited = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    exited.wait()
    with pytest.raises(RuntimeError, match="exited with 3 before listening"):
        wait_listening(free_port(), exited, timeout=30)


def test_nothing_listening_times_out_naming_the_port():
    port = free_port()
    with pytest.raises(TimeoutError, match=f"127.0.0.1:{port}"):
        wait_listening(port, timeout=0.1)
