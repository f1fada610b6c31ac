"""Write i3_logic/data/sample.jsonl, the bundled offline stand-in for the INTELLECT-3-RL rows.

The sample is every row of ``tests/rows/*.jsonl`` (files in name order, rows in file order)
without the test-only keys (``_right``, ``_wrong``, ...). Those rows are in the real ``logic``
format (``question``, ``info`` as a JSON string with ``task`` and ``game_data_str``), one file
per task family, at least one row for every task key upstream verifies. Their
``avg@16_qwen3_4b_instruct_2507`` values are placeholders assigned here (0.75 / 0.5 / 0.25 in
turn), not measured pass rates: they exist so the difficulty filter can be exercised offline.
Run: ``uv run python environments/i3-logic/scripts/make_sample.py``.
"""

from __future__ import annotations

from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
ROWS = ROOT / "tests" / "rows"
OUT = ROOT / "i3_logic" / "data" / "sample.jsonl"
DIFFICULTY_KEY = "avg@16_qwen3_4b_instruct_2507"
PLACEHOLDER_PASS_RATES = (0.75, 0.5, 0.25)


def row_files() -> list[Path]:
    return sorted(ROWS.glob("*.jsonl"))


def read_rows(path: Path) -> list[dict]:
    """The rows of one file, test-only keys included; blank lines are skipped."""
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def sample_rows() -> list[dict]:
    rows: list[dict] = []
    for path in row_files():
        for row in read_rows(path):
            kept = {k: v for k, v in row.items() if not k.startswith("_")}
            kept[DIFFICULTY_KEY] = PLACEHOLDER_PASS_RATES[len(rows) % 3]
            rows.append(kept)
    return rows


def render() -> bytes:
    return b"".join(orjson.dumps(row) + b"\n" for row in sample_rows())


if __name__ == "__main__":
    OUT.write_bytes(render())
    print(f"wrote {OUT} ({len(sample_rows())} rows)")
