"""Cost of i3-logic per puzzle, as Markdown tables (CPU time, ``time.process_time``).

1. Generation, for the families with a generator: mean of 30 puzzles per level.
2. Verification, for every family: mean over all the scored replies of its real-format rows
   (``tests/rows/<family>.jsonl``, ``_right`` and ``_wrong``), 20 passes, the row's metadata
   check included (as the reward does it).

Run: ``uv run python environments/i3-logic/scripts/measure.py``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from i3_logic import FAMILIES, GENERATED, generate, puzzle_from_info, verify

COUNT = 30
PASSES = 20
ROWS = Path(__file__).resolve().parents[1] / "tests" / "rows"


def generation() -> None:
    print("| family | level 1 | level 2 | level 3 |")
    print("|---|---|---|---|")
    for name in GENERATED:
        cells = []
        for lvl in (1, 2, 3):
            start = time.process_time()
            for i in range(COUNT):
                generate(name, 0, lvl, i)
            cells.append(f"{(time.process_time() - start) / COUNT * 1000:.2f} ms")
        print(f"| {name} | {' | '.join(cells)} |")


def verification() -> None:
    print("| family | replies | verify |")
    print("|---|---|---|")
    for name in FAMILIES:
        rows = [json.loads(x) for x in (ROWS / f"{name}.jsonl").read_text().splitlines() if x]
        cases = [(r["info"], reply) for r in rows for reply in r["_right"] + r["_wrong"]]
        start = time.process_time()
        for _ in range(PASSES):
            for info, reply in cases:
                verify(puzzle_from_info(info), reply)
        per = (time.process_time() - start) / (PASSES * len(cases)) * 1e6
        print(f"| {name} | {len(cases)} | {per:.0f} µs |")


if __name__ == "__main__":
    generation()
    print()
    verification()
