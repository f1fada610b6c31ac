"""Saving rollouts as they finish, reading them back, and summarising a run."""

from __future__ import annotations

import math
import os
import statistics
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

RESULTS_FILE = "results.jsonl"
METADATA_FILE = "metadata.json"


def _default(obj: Any) -> Any:
    dump = getattr(obj, "model_dump", None)
    if dump is not None:
        return dump()
    if isinstance(obj, (set, tuple)):
        return list(obj)
    return repr(obj)


def dumps(obj: Any) -> bytes:
    """JSON with NaN written as null (the JSON standard has no NaN)."""
    return orjson.dumps(obj, default=_default, option=orjson.OPT_SERIALIZE_NUMPY)


class ResultsWriter:
    """Appends one JSON line per rollout to `results.jsonl`, flushed after every batch, so a
    killed run loses nothing that finished."""

    def __init__(self, run_dir: str | os.PathLike[str]) -> None:
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.run_dir / RESULTS_FILE
        self._file = open(self.path, "ab")
        self._repair_tail()
        self.count = 0

    def _repair_tail(self) -> None:
        # A run killed mid-write can leave a partial last line; end it so appends stay valid.
        size = self._file.tell()
        if size:
            with open(self.path, "rb") as f:
                f.seek(size - 1)
                if f.read(1) != b"\n":
                    self._file.write(b"\n")

    def write(self, outputs: Iterable[dict[str, Any]]) -> None:
        data = b"".join(dumps(o) + b"\n" for o in outputs)
        if data:
            self._file.write(data)
            self._file.flush()
            self.count += data.count(b"\n")

    def close(self) -> None:
        if not self._file.closed:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()


def read_results(run_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every complete line of `results.jsonl`; a truncated last line (a killed run) is skipped."""
    path = Path(run_dir) / RESULTS_FILE
    if not path.exists():
        return []
    outputs = []
    for line in path.read_bytes().splitlines():
        if not line.strip():
            continue
        try:
            row = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if row.get("reward") is None:
            row["reward"] = math.nan
        outputs.append(row)
    return outputs


def write_metadata(run_dir: str | os.PathLike[str], metadata: dict[str, Any]) -> None:
    """Atomically replace `metadata.json`."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=run_dir, prefix=".metadata.", suffix=".tmp")
    with os.fdopen(fd, "wb") as f:
        f.write(orjson.dumps(metadata, default=_default, option=orjson.OPT_INDENT_2))
    os.replace(tmp, run_dir / METADATA_FILE)


def read_metadata(run_dir: str | os.PathLike[str]) -> dict[str, Any]:
    path = Path(run_dir) / METADATA_FILE
    return orjson.loads(path.read_bytes()) if path.exists() else {}


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k estimator (Chen et al., 2021): 1 - C(n-c, k) / C(n, k)."""
    if n - c < k:
        return 1.0
    prob_all_fail = 1.0
    for i in range(n - c + 1, n + 1):
        prob_all_fail *= 1.0 - k / i
    return 1.0 - prob_all_fail


def summarize(outputs: list[dict[str, Any]], pass_threshold: float = 0.5) -> dict[str, Any]:
    """Reward mean/std, pass@k, metric means, error counts by type and token usage."""
    rewards = [o.get("reward") for o in outputs]
    finite = [r for r in rewards if r is not None and math.isfinite(r)]
    summary: dict[str, Any] = {
        "num_rollouts": len(outputs),
        "avg_reward": statistics.fmean(finite) if finite else math.nan,
        "std_reward": statistics.pstdev(finite) if len(finite) > 1 else 0.0,
    }
    by_example: dict[Any, list[float]] = defaultdict(list)
    for o in outputs:
        r = o.get("reward")
        by_example[o.get("example_id")].append(r if r is not None else math.nan)
    sizes = [len(v) for v in by_example.values()]
    pass_k: dict[str, float] = {}
    if sizes:
        n_min = min(sizes)
        k = 1
        while k <= n_min:
            vals = [
                pass_at_k(len(v), sum(1 for r in v if r >= pass_threshold), k)
                for v in by_example.values()
            ]
            pass_k[str(k)] = statistics.fmean(vals)
            k *= 2
    summary["pass_at_k"] = pass_k
    summary["pass_threshold"] = pass_threshold
    metric_values: dict[str, list[float]] = defaultdict(list)
    for o in outputs:
        for name, value in (o.get("metrics") or {}).items():
            if value is not None and math.isfinite(value):
                metric_values[name].append(value)
    summary["avg_metrics"] = {k: statistics.fmean(v) for k, v in metric_values.items()}
    errors = Counter((o.get("error") or {}).get("error") for o in outputs if o.get("error"))
    summary["errors"] = dict(errors)
    usage = Counter()
    for o in outputs:
        usage.update(o.get("token_usage") or {})
    summary["usage"] = dict(usage)
    return summary
