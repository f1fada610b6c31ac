"""Answers that scan a whole run's index: the reward histogram and the per-member means."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .index_db import IndexDb
from .query import Filters, Histogram, where


def reward_histogram(db: IndexDb, filters: Filters, bins: int) -> Histogram:
    clauses, args = filters.clauses()
    lo, hi, n = db.query(
        f"SELECT MIN(reward), MAX(reward), COUNT(reward) FROM rollouts r{where(clauses)}", args
    )[0]
    if not n:
        return Histogram(0.0, 1.0, [0] * bins, 0)
    if hi - lo < 1e-12:
        lo, hi = (lo - 0.5, hi + 0.5) if lo not in (0.0, 1.0) else (0.0, 1.0)
    width = (hi - lo) / bins
    counts = [0] * bins
    for b, c in db.query(
        f"SELECT MIN(CAST((reward - ?) / ? AS INTEGER), ?), COUNT(*) FROM rollouts r"
        f"{where([*clauses, 'r.reward IS NOT NULL'])} GROUP BY 1",
        [lo, width, bins - 1, *args],
    ):
        counts[int(b)] += c
    return Histogram(lo, hi, counts, n)


def member_means(db: IndexDb, owners: Mapping[str, list[str]] | None) -> list[dict[str, Any]]:
    out = []
    for name, n, mean, failed in db.query(
        "SELECT member, COUNT(*), AVG(CASE WHEN error IS NULL THEN reward END), COUNT(error)"
        " FROM rollouts WHERE member IS NOT NULL GROUP BY member ORDER BY member"
    ):
        metrics = {
            metric: value
            for metric, value in db.query(
                "SELECT m.name, AVG(m.value) FROM metrics m JOIN rollouts r ON r.line = m.line"
                " WHERE r.member = ? AND r.error IS NULL GROUP BY m.name ORDER BY m.name",
                (name,),
            )
            if owners is None or name not in owners or metric in owners[name]
        }
        out.append(
            {"member": name, "rollouts": n, "failed": failed, "mean_reward": mean,
             "metrics": metrics}
        )  # fmt: skip
    return out
