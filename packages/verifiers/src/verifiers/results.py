"""Saving rollouts as they finish, reading them back, and summarising a run."""

from __future__ import annotations

import logging
import math
import os
import statistics
import tempfile
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

logger = logging.getLogger(__name__)

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


def parsed_answer(parser: Any, completion: Any) -> str | None:
    """What the grader's parser extracts from a completion, as a record keeps it: a string,
    or None when nothing was parsed (no parser, None or blank, or the parser raised). Called
    once per rollout while it is scored, so the record shows what the grader saw."""
    parse = getattr(parser, "parse_answer", None)
    if parse is None or completion is None:
        return None
    try:
        value = parse(completion)
    except Exception as e:  # a parser that fails on odd output must not lose the rollout
        logger.debug("parse_answer failed: %r", e)
        return None
    if value is None:
        return None
    text = value if isinstance(value, str) else str(value)
    return text if text.strip() else None


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

    def write(self, outputs: Iterable[Mapping[str, Any]]) -> None:
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


def summarize(
    outputs: Sequence[Mapping[str, Any]],
    pass_threshold: float = 0.5,
    metric_owners: Mapping[str, Iterable[str]] | None = None,
) -> dict[str, Any]:
    """Reward mean/std, pass@k, metric means, error counts by type and token usage.

    A rollout is scored when it has no error and a finite reward; with none scored there is
    no mean reward (NaN, written as null) and ``first_error`` says why. ``metric_owners`` (an
    `EnvGroup`'s member names and the metrics each records) adds ``by_env``, the same summary
    per member, and takes each pooled metric over the rollouts of the members that record it
    (``metric_envs`` names them): the group fills other members' metrics with 0.0."""
    summary = _stats(outputs, None)
    summary["num_rollouts"] = len(outputs)
    # per example: [rollouts, rollouts at or over the threshold] (NaN is neither)
    by_example: dict[Any, list[int]] = {}
    usage: dict[str, Any] = {}
    for o in outputs:  # one pass, plain loops: called over every rollout of a run
        r = o.get("reward")
        passed = r is not None and r >= pass_threshold
        counts = by_example.get(o.get("example_id"))
        if counts is None:
            by_example[o.get("example_id")] = [1, int(passed)]
        else:
            counts[0] += 1
            counts[1] += passed
        token_usage = o.get("token_usage")
        if token_usage:
            for key, count in token_usage.items():
                usage[key] = usage.get(key, 0) + count
    pass_k: dict[str, float] = {}
    if by_example and summary["scored_rollouts"]:
        n_min = min([n for n, _ in by_example.values()])
        k = 1
        while k <= n_min:
            vals = [
                # pass_at_k's two exact ends without a call: all failed, too few failures
                0.0 if c == 0 else 1.0 if n - c < k else pass_at_k(n, c, k)
                for n, c in by_example.values()
            ]
            pass_k[str(k)] = statistics.fmean(vals)
            k *= 2
    summary["pass_at_k"] = pass_k
    summary["pass_threshold"] = pass_threshold
    summary["usage"] = usage
    if metric_owners is not None:
        owners = {name: set(metrics) for name, metrics in metric_owners.items()}
        members: dict[str, list[Mapping[str, Any]]] = {name: [] for name in owners}
        for o in outputs:
            members.setdefault(member_of(o) or "?", []).append(o)
        summary["by_env"] = {
            name: {"num_rollouts": len(rows), **_stats(rows, owners.get(name, set()))}
            for name, rows in members.items()
            if rows
        }
        covered = outputs if summary["scored_rollouts"] else []
        envs: dict[str, list[str]] = defaultdict(list)
        values: dict[str, list[float]] = defaultdict(list)
        for name, owned in owners.items():
            for metric in sorted(owned):
                if members.get(name):
                    envs[metric].append(name)
        for o in covered:
            for metric, value in (o.get("metrics") or {}).items():
                if metric in owners.get(member_of(o) or "?", ()) and _finite(value):
                    values[metric].append(value)
        summary["avg_metrics"] = {k: statistics.fmean(v) for k, v in sorted(values.items())}
        summary["metric_envs"] = {k: envs[k] for k in summary["avg_metrics"]}
    return summary


def member_of(output: Mapping[str, Any]) -> str | None:
    """The `EnvGroup` member a rollout was routed to: its ``task`` (the member's name), else
    the head of its ``info["env_id"]`` route."""
    task = output.get("task")
    if isinstance(task, str):
        return task
    route = (output.get("info") or {}).get("env_id")
    if isinstance(route, list) and route:
        route = route[0]
    return route if isinstance(route, str) else None


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)


def _pstdev(values: list[float]) -> float:
    """Population standard deviation, two passes of `math.fsum` (`statistics.pstdev`'s exact
    rational arithmetic costs about a microsecond per rollout on a large run)."""
    mean = math.fsum(values) / len(values)
    return math.sqrt(math.fsum([(v - mean) ** 2 for v in values]) / len(values))


def _stats(outputs: Sequence[Mapping[str, Any]], owned: set[str] | None) -> dict[str, Any]:
    """Reward, metrics (``owned`` only, when given) and errors over the scored rollouts."""
    scored = 0
    finite: list[float] = []
    metric_values: dict[str, list[float]] = {}
    errors: dict[Any, int] = {}
    first = None
    for o in outputs:  # one pass, `_finite` inline: called over every rollout of a run
        error = o.get("error")
        reward = o.get("reward")
        if isinstance(reward, (int, float)) and math.isfinite(reward):
            finite.append(reward)
            if not error:
                scored += 1
        if error:
            kind = error.get("error")
            errors[kind] = errors.get(kind, 0) + 1
            if first is None:
                first = error
        metrics = o.get("metrics")
        if metrics:
            for name, value in metrics.items():
                if (
                    (owned is None or name in owned)
                    and isinstance(value, (int, float))
                    and math.isfinite(value)
                ):
                    values = metric_values.get(name)
                    if values is None:
                        metric_values[name] = [value]
                    else:
                        values.append(value)
    if not scored:
        # Failed rollouts keep the reward and metrics they were given (upstream counts
        # them); with none scored, a mean would only average the placeholders of failures.
        finite, metric_values = [], {}
    stats: dict[str, Any] = {
        "scored_rollouts": scored,
        "avg_reward": statistics.fmean(finite) if finite else math.nan,
        "std_reward": _pstdev(finite) if len(finite) > 1 else (0.0 if finite else math.nan),
    }
    stats["avg_metrics"] = {k: statistics.fmean(v) for k, v in sorted(metric_values.items())}
    stats["errors"] = errors
    if first is not None:
        stats["first_error"] = f"{first.get('error')}: {first.get('message', '')}"
    return stats
