"""Run ``vf-eval`` as a user would (a subprocess) and read back what it saved."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any


def run_vf_eval(
    cwd: str | Path, env_id: str, base_url: str, *args: Any, model: str = "m", timeout: float = 120
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Evaluate ``env_id`` against ``base_url`` in ``cwd``; return (result rows, metadata).

    Raises ``AssertionError`` with vf-eval's stderr when it exits non-zero.
    """
    cmd = [sys.executable, "-m", "verifiers.cli.eval", env_id, "-m", model, "-b", base_url]
    cmd += ["--no-progress", *map(str, args)]
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise AssertionError(f"vf-eval exited {proc.returncode}:\n{proc.stderr}")
    runs = sorted((Path(cwd) / "outputs" / "evals" / f"{env_id}--{model}").iterdir())
    run = runs[-1]
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    return rows, json.loads((run / "metadata.json").read_text())
