"""The trainer loop in docs/examples runs as documented and leaves a usable checkpoint."""

import importlib.util
import json
from pathlib import Path

import verifiers as vf

EXAMPLE = Path(__file__).resolve().parents[3] / "docs" / "examples" / "trainer_loop.py"


def test_trainer_loop_example_runs(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("trainer_loop_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # in this process: the script's imports are already paid
    checkpoint = tmp_path / "ckpt.json"
    module.main(["--steps", "3", "--groups-per-step", "2", "--max-in-flight", "4",
                 "--checkpoint", str(checkpoint)])  # fmt: skip
    out = capsys.readouterr().out
    steps = [line for line in out.splitlines() if line.startswith("step ")]
    assert [line.split(":")[0] for line in steps] == ["step 1", "step 2", "step 3"]
    assert all("2 groups, 8 samples" in line for line in steps)
    saved = json.loads(checkpoint.read_text())
    assert saved["step"] == 3 and saved["stream"]["yielded_groups"] == 6
    rows = [{"example_id": i, "question": "q"} for i in range(32)]
    pools = vf.DifficultyFilter(rows)
    pools.load_state_dict(saved["difficulty"])
    assert pools.counters["groups"] >= 6
