"""A run's summary: reward mean and spread, pass@k, metric means, errors and token usage.

`summarize` runs once per run over every rollout, so its cost is paid per rollout. Output
records as the library writes them (plain dicts holding every key, numbers for rewards and
metrics, the same metric names and usage keys on every rollout, no errors) are read a column
at a time with C-level iteration (`map`, `itemgetter`, `Counter`), a few bytecodes per run
instead of a few dozen per rollout. Anything else (records read back from a file of another
make, EnvGroup members with their own metrics, failures) takes the row-at-a-time path. Both
paths give the same figures, bit for bit: the same values in the same order reach the same
`math.fsum`.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from functools import reduce
from itertools import chain, compress, repeat
from operator import add, contains, ge, itemgetter
from typing import Any, NamedTuple

_NUMBERS = frozenset({float, int, bool})  # what `isinstance(v, (int, float))` admits, exactly
_DICT_ONLY = frozenset({dict})
_COLUMNS = itemgetter("reward", "error", "metrics", "example_id", "token_usage")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k estimator (Chen et al., 2021): 1 - C(n-c, k) / C(n, k)."""
    if n - c < k:
        return 1.0
    prob_all_fail = 1.0
    for i in range(n - c + 1, n + 1):
        prob_all_fail *= 1.0 - k / i
    return 1.0 - prob_all_fail


def _pass_value(n: int, c: int, k: int) -> float:
    # pass_at_k's two exact ends without a call: all failed, too few failures
    return 0.0 if c == 0 else 1.0 if n - c < k else pass_at_k(n, c, k)


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
    columns = _Columns.read(outputs)
    if columns is None:
        summary = _stats(outputs, None)
        per_example, usage = _examples_and_usage(outputs, pass_threshold)
    else:
        summary = columns.stats()
        per_example, usage = columns.examples_and_usage(pass_threshold)
    summary["num_rollouts"] = len(outputs)
    pass_k: dict[str, float] = {}
    if per_example and summary["scored_rollouts"]:
        n_min = min([n for n, _ in per_example])
        k = 1
        while k <= n_min:
            # one value per distinct (rollouts, passed) pair, repeated as often as it occurs:
            # `fsum` is exact, so the mean is the one over every example
            total = math.fsum(
                chain.from_iterable(
                    repeat(_pass_value(n, c, k), times) for (n, c), times in per_example.items()
                )
            )
            pass_k[str(k)] = total / per_example.total()
            k *= 2
    summary["pass_at_k"] = pass_k
    summary["pass_threshold"] = pass_threshold
    summary["usage"] = usage
    if metric_owners is not None:
        _add_members(summary, outputs, metric_owners)
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


class _Columns(NamedTuple):
    """The summary's columns of records the library wrote (see the module's docstring)."""

    rewards: list[Any]
    metrics: list[dict[str, Any]]
    metric_names: list[str]
    example_ids: list[Any]
    usages: list[dict[str, Any]]
    usage_keys: list[str]

    @classmethod
    def read(cls, outputs: Sequence[Mapping[str, Any]]) -> _Columns | None:
        if not outputs or not _DICT_ONLY.issuperset(map(type, outputs)):
            return None
        try:
            rewards, errors, metrics, ids, usages = zip(*map(_COLUMNS, outputs), strict=True)
        except KeyError:
            return None
        if any(errors) or not _NUMBERS.issuperset(map(type, rewards)):
            return None
        metric_names, usage_keys = _same_keys(metrics), _same_keys(usages)
        if metric_names is None or usage_keys is None:
            return None
        return cls(list(rewards), list(metrics), metric_names, list(ids), list(usages), usage_keys)

    def stats(self) -> dict[str, Any]:
        finite = list(filter(math.isfinite, self.rewards))
        metric_values: dict[str, list[float]] = {}
        for name in self.metric_names:
            column = list(map(itemgetter(name), self.metrics))
            if not _NUMBERS.issuperset(map(type, column)):
                # a metric that is not a plain number everywhere: filtered value by value
                column = [v for v in column if isinstance(v, (int, float))]
            values = list(filter(math.isfinite, column))
            if values:
                metric_values[name] = values
        scored = len(finite)  # no errors here: every finite reward is a scored rollout
        if not scored:
            finite, metric_values = [], {}
        return _stats_record(scored, finite, metric_values, {}, None)

    def examples_and_usage(
        self, pass_threshold: float
    ) -> tuple[Counter[tuple[int, int]], dict[str, Any]]:
        ids = self.example_ids
        rollouts = Counter(ids)
        passed = Counter(compress(ids, map(ge, self.rewards, repeat(pass_threshold))))
        per_example = Counter(
            zip(rollouts.values(), map(passed.get, rollouts, repeat(0)), strict=True)
        )
        usage: dict[str, Any] = {}
        for key in self.usage_keys:
            usage[key] = reduce(add, map(itemgetter(key), self.usages), 0)
        return per_example, usage


def _same_keys(rows: Sequence[Any]) -> list[str] | None:
    """The keys every row holds when all hold the same ones (all dicts, or all empty or
    None: no keys), else None."""
    first = rows[0]
    if not first:
        return [] if not any(rows) else None
    if not _DICT_ONLY.issuperset(map(type, rows)) or len(set(map(len, rows))) != 1:
        return None
    keys = list(first)
    for key in keys:
        if not all(map(contains, rows, repeat(key))):
            return None
    return keys


def _examples_and_usage(
    outputs: Sequence[Mapping[str, Any]], pass_threshold: float
) -> tuple[Counter[tuple[int, int]], dict[str, Any]]:
    """Per example, (rollouts, rollouts at or over the threshold), counted by pair (NaN is
    neither); and token usage summed by key."""
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
    return Counter((n, c) for n, c in by_example.values()), usage


def _add_members(
    summary: dict[str, Any],
    outputs: Sequence[Mapping[str, Any]],
    metric_owners: Mapping[str, Iterable[str]],
) -> None:
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
    return _stats_record(scored, finite, metric_values, errors, first)


def _stats_record(
    scored: int,
    finite: list[float],
    metric_values: dict[str, list[float]],
    errors: dict[Any, int],
    first: Mapping[str, Any] | None,
) -> dict[str, Any]:
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
