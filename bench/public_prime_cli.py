"""The public ``prime`` CLI from PyPI, in a venv of its own (bench/.venvs/prime-cli-<version>).

It shares the distribution name ``prime`` and the import names with our CLI
(packages/cli), so it can never live in the workspace .venv. The venv is built with uv on
first use and reused while its stamp (the pins below) is unchanged.

    python bench/public_prime_cli.py         # build if needed, print the `prime` executable
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERSION = "0.18.0"  # the newest 0.18.x on PyPI
# Its own prime-* libraries pinned too, so the CLI under test cannot drift underneath us.
PINS = [
    f"prime=={VERSION}",
    "prime-evals==0.2.4",
    "prime-sandboxes==0.5.1",
    "prime-traces==0.0.10",
    "prime-tunnel==0.1.15",
]
VENV = ROOT / "bench" / ".venvs" / f"prime-cli-{VERSION}"


def _uv() -> list[str]:
    exe = shutil.which("uv")
    return [exe] if exe else [sys.executable, "-m", "uv"]


def ensure() -> Path:
    """Build the venv when missing or stale; return the path of its ``prime`` executable."""
    VENV.parent.mkdir(parents=True, exist_ok=True)
    exe = VENV / "bin" / "prime"
    stamp = VENV / ".public-prime-stamp"
    want = "\n".join(PINS)
    # one builder at a time (parallel test workers, a bench run next to a test run)
    with open(VENV.parent / f".prime-cli-{VERSION}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if exe.exists() and stamp.exists() and stamp.read_text() == want:
            return exe
        if VENV.exists():
            shutil.rmtree(VENV)
        py = f"{sys.version_info.major}.{sys.version_info.minor}"
        subprocess.run([*_uv(), "venv", "-q", "--python", py, str(VENV)], check=True)
        subprocess.run(
            [
                *_uv(),
                "pip",
                "install",
                "-q",
                "--compile-bytecode",  # the CLI imports a lot: bytecode halves each start
                "--python",
                str(VENV / "bin" / "python"),
                *PINS,
            ],
            check=True,
        )
        stamp.write_text(want)
    return exe


if __name__ == "__main__":
    print(ensure())
