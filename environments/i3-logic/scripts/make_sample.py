"""Write i3_logic/data/sample.jsonl: two generated puzzles per family plus one ``mathador`` row.

Rows have the INTELLECT-3-RL ``logic`` columns: ``question``, ``info`` (JSON string with
``task`` and ``game_data_str``) and ``avg@16_qwen3_4b_instruct_2507``. The pass rates are
placeholders by level (0.75 / 0.5 / 0.25), not measurements: they exist so the difficulty
filter can be exercised offline. Run: ``uv run python environments/i3-logic/scripts/make_sample.py``.
"""

from __future__ import annotations

from pathlib import Path

import orjson
from i3_logic import DIFFICULTY_KEY, FAMILIES, generate

SEED = 2026
PLACEHOLDER_PASS_RATE = {1: 0.75, 2: 0.5, 3: 0.25}


def sample_rows() -> list[dict]:
    rows = []
    picks = [(name, name, lvl, lvl) for name in FAMILIES for lvl in (1, 2)]
    picks.append(("game_of_24", "mathador", 3, 0))
    for family, task, lvl, index in picks:
        puzzle = generate(family, SEED, lvl, index)
        info = {"task": task, "game_data_str": puzzle.game_data_str()}
        rows.append(
            {
                "question": puzzle.question,
                "info": orjson.dumps(info).decode(),
                DIFFICULTY_KEY: PLACEHOLDER_PASS_RATE[lvl],
            }
        )
    return rows


def render() -> bytes:
    return b"".join(orjson.dumps(row) + b"\n" for row in sample_rows())


if __name__ == "__main__":
    out = Path(__file__).resolve().parents[1] / "i3_logic" / "data" / "sample.jsonl"
    out.write_bytes(render())
    print(f"wrote {out}")
