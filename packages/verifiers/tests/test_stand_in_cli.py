"""`python -m verifiers.testing serve` on a busy port, and the quickstart's recipe that waits for
it (issue 27: the stand-in crashed with a 27-line traceback on a busy port, and the documented
`until grep -q READY` loop then never ended)."""

from __future__ import annotations

import re
import shlex
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from verifiers.testing import free_port

QUICKSTART = Path(__file__).resolve().parents[3] / "docs" / "quickstart.md"
SERVE = [sys.executable, "-m", "verifiers.testing", "serve"]


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A loopback port someone else is listening on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


def test_busy_port_is_one_line_and_exit_1(busy_port: int) -> None:
    r = subprocess.run(
        [*SERVE, "--port", str(busy_port)], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 1
    assert r.stdout == ""  # no READY for a waiting script to find
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert f"port {busy_port} on 127.0.0.1 is already in use" in lines[0]
    assert "--port 0" in lines[0]


def test_unusable_host_is_one_line_and_exit_1() -> None:
    """192.0.2.1 (TEST-NET-1, RFC 5737) is no address of this machine: not bindable."""
    r = subprocess.run([*SERVE, "--host", "192.0.2.1"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    assert r.stderr.startswith("python -m verifiers.testing serve: error: cannot listen on ")
    assert len(r.stderr.splitlines()) == 1, r.stderr


def _recipe(port: int) -> str:
    """The quickstart's block that starts the stand-in, up to the end of its wait loop, with
    this interpreter for `uv run python` and `port` for the page's 8011."""
    text = QUICKSTART.read_text()
    block = next(b for b in re.findall(r"```bash\n(.*?)```", text, re.S) if "testing serve" in b)
    wait = block[: block.index("\ndone\n") + len("\ndone\n")]
    assert "uv run python -m verifiers.testing serve --port 8011" in wait
    wait = wait.replace("uv run python", shlex.quote(sys.executable)).replace("8011", str(port))
    # what the reader would see next: whether it is still running, and how it ended
    after = "if kill -0 $! 2>/dev/null; then echo RUNNING; kill $!; fi\n"
    return wait + after + 'code=0; wait $! || code=$?; echo "exit=$code"\n'


def _run_recipe(port: int, tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], str]:
    r = subprocess.run(
        ["bash", "-c", "set -eo pipefail\n" + _recipe(port)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,  # the loop is bounded (100 tries of 0.2 s); this only keeps a bug from hanging CI
    )
    return r, (tmp_path / "stand-in.log").read_text()


def test_documented_wait_ends_when_the_port_is_busy(busy_port: int, tmp_path: Path) -> None:
    """The loop stops because the process is gone (exit 1), not by running out of tries: the
    server is no longer running when it ends, and its one-line error reached the terminal."""
    r, log = _run_recipe(busy_port, tmp_path)
    assert r.returncode == 0, r.stderr
    assert "READY" not in log
    assert "RUNNING" not in r.stdout
    assert r.stdout.strip().endswith("exit=1")
    assert r.stderr.count("\n") == 1 and "is already in use" in r.stderr


def test_documented_wait_ends_on_ready(tmp_path: Path) -> None:
    port = free_port()  # free now (the page's 8011 may be taken here)
    r, log = _run_recipe(port, tmp_path)
    assert r.returncode == 0, r.stderr
    assert log.startswith(f"READY http://127.0.0.1:{port}/v1")
    assert "RUNNING" in r.stdout  # ended because it is serving; then stopped by the kill above
    assert r.stdout.strip().endswith("exit=0")
