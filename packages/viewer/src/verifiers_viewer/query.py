"""What a page asks the index: filters (as SQL over the ``rollouts`` table, aliased ``r``),
the sortable columns, and the shapes of the answers."""

from __future__ import annotations

from dataclasses import astuple, dataclass, field
from typing import Any

# Columns a page may sort on, by the name in the URL; each has an index (so a page is a walk
# along it, not a sort of the run).
SORT_COLUMNS = {
    "line": "r.line",
    "example": "r.example_id",
    "reward": "r.reward",
    "error": "r.error",
    "stop": "r.stop",
    "member": "r.member",
    "turns": "r.turns",
    "input_tokens": "r.input_tokens",
    "output_tokens": "r.output_tokens",
}
METRIC_SORT_PREFIX = "metric:"


def example_key(example: Any) -> tuple[Any, ...]:
    """The stored values an example id from a URL may match: its text, and the integer when
    it is one (ids keep their JSON type in the index)."""
    text = str(example)
    try:
        return (int(text), text) if str(int(text)) == text else (text,)
    except ValueError:
        return (text,)


@dataclass(frozen=True)
class Filters:
    """What the run page narrows the rollouts to; every field optional."""

    reward_min: float | None = None
    reward_max: float | None = None
    error: str | None = None  # an error type, "any" (failed) or "none" (no error)
    stop: str | None = None
    example: str | None = None
    member: str | None = None
    metric: str | None = None
    metric_min: float | None = None
    metric_max: float | None = None

    def key(self) -> tuple[Any, ...]:
        return astuple(self)

    def clauses(self) -> tuple[list[str], list[Any]]:
        """SQL conditions on ``r`` (joined with AND) and their arguments."""
        clauses, args = _within("r.reward", self.reward_min, self.reward_max)
        if self.error == "any":
            clauses.append("r.error IS NOT NULL")
        elif self.error == "none":
            clauses.append("r.error IS NULL")
        elif self.error:
            clauses.append("r.error = ?")
            args.append(self.error)
        if self.stop:
            clauses.append("r.stop = ?")
            args.append(self.stop)
        if self.example not in (None, ""):
            values = example_key(self.example)
            clauses.append(f"r.example_id IN ({', '.join('?' * len(values))})")
            args.extend(values)
        if self.member:
            clauses.append("r.member = ?")
            args.append(self.member)
        if self.metric:
            cond, margs = _within("value", self.metric_min, self.metric_max)
            cond.insert(0, "name = ?")
            clauses.append(f"r.line IN (SELECT line FROM metrics WHERE {' AND '.join(cond)})")
            args += [self.metric, *margs]
        return clauses, args


def _within(column: str, low: float | None, high: float | None) -> tuple[list[str], list[Any]]:
    """SQL conditions keeping `column` within the bounds given (either may be None: open)."""
    clauses: list[str] = []
    args: list[Any] = []
    if low is not None:
        clauses.append(f"{column} >= ?")
        args.append(low)
    if high is not None:
        clauses.append(f"{column} <= ?")
        args.append(high)
    return clauses, args


def where(clauses: list[str]) -> str:
    return (" WHERE " + " AND ".join(clauses)) if clauses else ""


@dataclass
class Row:
    """One rollout as the index knows it (the record itself is read on demand)."""

    line: int
    example_id: Any
    rollout_index: int | None
    reward: float | None
    error: str | None
    stop: str | None
    member: str | None
    turns: int | None
    input_tokens: int | None
    output_tokens: int | None
    parsed_answer: str | None
    answer: str | None
    metrics: dict[str, float | None] = field(default_factory=dict)


ROW_COLUMNS = (
    "r.line, r.example_id, r.rollout_index, r.reward, r.error, r.stop, r.member, r.turns, "
    "r.input_tokens, r.output_tokens, r.parsed_answer, r.answer"
)


@dataclass
class Histogram:
    lo: float
    hi: float
    counts: list[int]
    total: int

    def edges(self) -> list[tuple[float, float]]:
        width = (self.hi - self.lo) / len(self.counts)
        return [(self.lo + i * width, self.lo + (i + 1) * width) for i in range(len(self.counts))]
