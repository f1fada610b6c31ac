"""Evaluation results for a page: a table per model and a small reward-by-version chart (SVG)."""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from typing import Any

from packaging.version import InvalidVersion
from packaging.version import Version as PkgVersion

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b")


@dataclass
class ModelResults:
    model: str
    rows: list[dict[str, Any]] = field(default_factory=list)  # newest first


def by_model(evals: list[dict[str, Any]]) -> list[ModelResults]:
    """Results grouped per model, models ordered by their best mean reward."""
    groups: dict[str, ModelResults] = {}
    for e in evals:
        groups.setdefault(e["model"], ModelResults(e["model"])).rows.append(e)

    def best(g: ModelResults) -> float:
        rewards = [r["reward_mean"] for r in g.rows if r.get("reward_mean") is not None]
        return max(rewards, default=float("-inf"))

    return sorted(groups.values(), key=best, reverse=True)


def _version_order(v: str) -> tuple[int, Any]:
    """PEP 440 order; a string that is not a version (never stored by the hub) sorts last
    instead of failing the page."""
    try:
        return (0, PkgVersion(v))
    except (InvalidVersion, TypeError):
        return (1, str(v))


def reward_chart(evals: list[dict[str, Any]], width: int = 520, height: int = 200) -> str:
    """Inline SVG: the latest mean reward of each model at each version (empty without data)."""
    points: dict[str, dict[str, float]] = {}
    for e in evals:  # newest first: the first result per (model, version) wins
        if e.get("reward_mean") is not None:
            points.setdefault(e["model"], {}).setdefault(e["version"], e["reward_mean"])
    if not points:
        return ""
    versions = sorted({v for per in points.values() for v in per}, key=_version_order)
    values = [r for per in points.values() for r in per.values()]
    lo, hi = min(0.0, *values), max(1.0, *values)
    left, right, top, bottom = 44, 16, 12, 40
    plot_w, plot_h = width - left - right, height - top - bottom

    def x(i: int) -> float:
        return left + (plot_w / 2 if len(versions) == 1 else plot_w * i / (len(versions) - 1))

    def y(r: float) -> float:
        return top + plot_h * (1 - (r - lo) / (hi - lo))

    out = [
        f'<svg class="chart" role="img" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" xmlns="http://www.w3.org/2000/svg">',
        "<title>Mean reward by version, per model</title>",
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" '
        'stroke="#888"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="#888"/>',
    ]
    for r in (lo, (lo + hi) / 2, hi):
        out.append(
            f'<text x="{left - 6}" y="{y(r) + 4:.1f}" text-anchor="end" font-size="11">'
            f"{r:.2g}</text>"
        )
    for i, v in enumerate(versions):
        out.append(
            f'<text x="{x(i):.1f}" y="{top + plot_h + 16}" text-anchor="middle" '
            f'font-size="11">{escape(v)}</text>'
        )
    for n, (model, per) in enumerate(sorted(points.items())):
        color = PALETTE[n % len(PALETTE)]
        coords = [(x(i), y(per[v]), v) for i, v in enumerate(versions) if v in per]
        if len(coords) > 1:
            path = " ".join(f"{cx:.1f},{cy:.1f}" for cx, cy, _ in coords)
            out.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{path}"/>')
        for cx, cy, v in coords:
            out.append(
                f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="3.5" fill="{color}">'
                f"<title>{escape(model)} @ {escape(v)}: {per[v]:.3f}</title></circle>"
            )
        out.append(
            f'<text x="{left + 8 + 150 * n}" y="{height - 6}" font-size="11" fill="{color}">'
            f"■ {escape(model[:24])}</text>"
        )
    out.append("</svg>")
    return "".join(out)


def fmt_pass_at_k(row: dict[str, Any]) -> str:
    pak = row.get("pass_at_k") or {}  # validated by evals.stored_details: int keys, numbers
    return " · ".join(f"pass@{k} {pak[k]:.3f}" for k in sorted(pak, key=int))


def fmt_metrics(row: dict[str, Any]) -> str:
    metrics = row.get("metrics") or {}
    return " · ".join(
        f"{name} {value:.3f}" if isinstance(value, int | float) else f"{name} –"
        for name, value in sorted(metrics.items())
    )
