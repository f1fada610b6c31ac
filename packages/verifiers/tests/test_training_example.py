"""The trainer loop in docs/examples runs as documented and leaves a usable checkpoint."""

import json
import subprocess
import sys
from pathlib import Path

import verifiers as vf

EXAMPLE = Path(__file__).resolve().parents[3] / "docs" / "examples" / "trainer_loop.py"


def test_trainer_loop_example_runs(tmp_path):
    checkpoint = tmp_path / "ckpt.json"
    cmd = [sys.executable, str(EXAMPLE), "--steps", "3", "--groups-per-step", "2"]
    cmd += ["--max-in-flight", "4", "--checkpoint", str(checkpoint)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    steps = [line for line in proc.stdout.splitlines() if line.startswith("step ")]
    assert [line.split(":")[0] for line in steps] == ["step 1", "step 2", "step 3"]
    assert all("2 groups, 8 samples" in line for line in steps)
    saved = json.loads(checkpoint.read_text())
    assert saved["step"] == 3 and saved["stream"]["yielded_groups"] == 6
    rows = [{"example_id": i, "question": "q"} for i in range(32)]
    pools = vf.DifficultyFilter(rows)
    pools.load_state_dict(saved["difficulty"])
    assert pools.counters["groups"] >= 6
