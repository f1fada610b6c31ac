"""Writing an environment's bundled sample from its problems file, as the code environments'
``scripts/make_sample.py`` do (i3-code, livecodebench): each problem is data in a TOML file
(statement, a correct and a wrong solution, test inputs), the expected outputs are what the
correct solution prints, and the rows are written as JSON lines (`write_jsonl`)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from verifiers.testing.environments import write_jsonl

__all__ = ["reference_stdout", "write_sample"]


def reference_stdout(code: str, text: str) -> str:
    """What the reference program ``code`` prints for ``text`` on stdin, run here in a fresh
    Python (our own solutions, at generation time only); a failure stops the script, naming
    the input and the program's stderr."""
    run = subprocess.run(
        [sys.executable, "-c", code], input=text, capture_output=True, text=True, timeout=30
    )
    if run.returncode != 0:
        raise SystemExit(f"reference solution failed on {text!r}: {run.stderr}")
    return run.stdout


def write_sample(out: Path, problems: Path, row: Callable[..., Mapping[str, Any]]) -> int:
    """Write ``row(**problem)`` for each ``[[problem]]`` table of the TOML file ``problems`` to
    ``out`` as JSON lines; returns how many."""
    rows = [row(**problem) for problem in tomllib.loads(problems.read_text())["problem"]]
    write_jsonl(out, rows)
    return len(rows)
