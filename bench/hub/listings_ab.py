"""Two hub trees' listing ratios, alternated: `listings.py` run ``--pairs`` times for each,
old and new in turn, so that both see the same drift of a shared machine.

A single run of `listings.py` moves by +-0.2 on the owner page's ratio (its SQL is under
1 ms), more than a change worth ~0.1 ms; the mean of alternated runs shows it.

    git archive <commit> packages/hub-server/src | tar -x -C /tmp/hub-old
    uv run --no-sync python bench/hub/listings_ab.py --old /tmp/hub-old [--pairs 8] [--backends sqlite]

``--old``: an export holding ``packages/hub-server/src`` (served through ``PYTHONPATH``, as
``listings.py --before`` documents); the new tree is this checkout. Prints, per listing, the
cold ratio's mean and median for each tree and every run's figure; writes ``--out`` (JSON).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent


def one_run(old: Path | None, backends: str, requests: int, out: Path) -> dict:
    env = dict(os.environ)
    if old is not None:
        env["PYTHONPATH"] = str(old / "packages/hub-server/src")
    cmd = [sys.executable, str(HERE / "listings.py"), "--backends", backends]
    cmd += ["--requests", str(requests), "--out", str(out)]
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    return json.loads(out.read_text())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--old", type=Path, required=True)
    p.add_argument("--pairs", type=int, default=8)
    p.add_argument("--backends", default="sqlite")
    p.add_argument("--requests", type=int, default=60)
    p.add_argument("--out", type=Path, default=HERE / "listings-ab.json")
    a = p.parse_args()
    ratios: dict[str, dict[str, list[float]]] = {"old": {}, "new": {}}
    with tempfile.TemporaryDirectory(prefix="listings-ab-") as tmp:
        for i in range(a.pairs):
            for tree, src in (("old", a.old), ("new", None)):
                result = one_run(src, a.backends, a.requests, Path(tmp) / f"{tree}-{i}.json")
                for run in result["runs"]:
                    for name, figures in run.items():
                        if isinstance(figures, dict) and "cold" in figures:
                            key = f"{run['backend']}: {name}"
                            ratios[tree].setdefault(key, []).append(figures["cold"]["ratio"])
            print(f"pair {i + 1}/{a.pairs} done", flush=True)
    summary = {}
    for key in ratios["new"]:
        summary[key] = {}
        for tree in ("old", "new"):
            runs = ratios[tree][key]
            summary[key][tree] = {
                "mean": round(statistics.mean(runs), 2),
                "median": round(statistics.median(runs), 2),
                "max": max(runs),
                "runs": runs,
            }
            print(
                f"{key:<40} {tree}: mean {statistics.mean(runs):.2f}, median "
                f"{statistics.median(runs):.2f}, max {max(runs):.2f}  {runs}"
            )
    a.out.write_text(
        json.dumps({"old": str(a.old), "pairs": a.pairs, "cold_ratio": summary}, indent=2) + "\n"
    )
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
