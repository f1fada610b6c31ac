"""Generation and verification cost per puzzle, as a Markdown table (CPU time, 30 puzzles).

Run: ``uv run python environments/i3-logic/scripts/measure.py``.
"""

from __future__ import annotations

import time

from i3_logic import FAMILIES, generate, verify

COUNT = 30


def main() -> None:
    print("| family | level 1 | level 2 | level 3 | verify, level 3 |")
    print("|---|---|---|---|---|")
    for name in FAMILIES:
        cells = []
        for lvl in (1, 2, 3):
            start = time.process_time()
            puzzles = [generate(name, 0, lvl, i) for i in range(COUNT)]
            cells.append(f"{(time.process_time() - start) / COUNT * 1000:.2f} ms")
        start = time.process_time()
        for puzzle in puzzles:
            for _ in range(10):
                verify(puzzle, f"<answer>{puzzle.answer}</answer>")
        per_verify = (time.process_time() - start) / (10 * COUNT) * 1e6
        print(f"| {name} | {' | '.join(cells)} | {per_verify:.0f} µs |")


if __name__ == "__main__":
    main()
