"""Offline difficulty filtering: keep dataset rows by a precomputed pass rate.

RL datasets such as INTELLECT-3's carry, per problem, the fraction of a reference model's
samples that solved it (e.g. ``avg@8_qwen3_4b_thinking_2507``). Training on problems that are
always or never solved teaches nothing, so environments keep rows whose rate lies in a band.
(`verifiers.training.DifficultyFilter` is the online counterpart, over live group rewards.)
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from verifiers.errors import ConfigError

__all__ = ["PassRateFilter"]


@dataclass(frozen=True, slots=True)
class PassRateFilter:
    """Keep rows whose pass rate (column ``key``) lies in ``[min_rate, max_rate]``.

    The filter is *active* only when a key is given and the band is narrower than ``[0, 1]``;
    an inactive filter keeps every row and needs no column. An active filter requires the
    column; a row with an empty rate (None or NaN) is kept only with ``keep_unrated``. A rate
    that is not a number is an error naming the row. ``param_names`` are the names the caller's
    users know the bounds by, used in error messages.
    """

    key: str | None
    min_rate: float = 0.0
    max_rate: float = 1.0
    keep_unrated: bool = False
    param_names: tuple[str, str] = field(default=("min_avg_reward", "max_avg_reward"), repr=False)

    def __post_init__(self) -> None:
        lo, hi = self.param_names
        if not 0.0 <= self.min_rate <= self.max_rate <= 1.0:
            raise ConfigError(
                f"need 0 <= {lo} <= {hi} <= 1, got {lo}={self.min_rate}, {hi}={self.max_rate}"
            )

    @property
    def active(self) -> bool:
        return self.key is not None and (self.min_rate, self.max_rate) != (0.0, 1.0)

    def describe(self) -> str:
        return f"{self.key} in [{self.min_rate}, {self.max_rate}]"

    def check_columns(self, columns: Iterable[str], what: str = "dataset") -> None:
        """Raise `ConfigError` when the filter is active and ``what`` lacks its column."""
        columns = list(columns)
        if self.active and self.key not in columns:
            lo, hi = self.param_names
            raise ConfigError(
                f"pass-rate filter {self.describe()} asked for, but {what} has no column "
                f"{self.key!r} (columns: {', '.join(columns)}); pass the right difficulty_key "
                f"or leave {lo}=0, {hi}=1"
            )

    def rate(self, value: Any, row: int) -> float | None:
        """The pass rate held in a cell: a float, or None when empty. Raises for non-numbers."""
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(
                f"row {row}: difficulty column {self.key!r} holds {value!r}; it must be a "
                "number (a pass rate in [0, 1]) or empty"
            )
        return float(value)

    def keeps(self, rate: float | None) -> bool:
        """Whether a row with this pass rate (None: unrated) passes the filter."""
        if not self.active:
            return True
        if rate is None:
            return self.keep_unrated
        return self.min_rate <= rate <= self.max_rate

    def rates(self, dataset: Any) -> list[float | None]:
        """Every row's pass rate (all None when the dataset has no such column)."""
        if self.key is None or self.key not in dataset.column_names:
            return [None] * len(dataset)
        return [self.rate(v, i) for i, v in enumerate(dataset[self.key])]

    def apply(self, dataset: Any, what: str = "dataset") -> Any:
        """The rows of a ``datasets.Dataset`` the filter keeps, in order.

        Raises `ConfigError` for a missing column (when active), a non-numeric rate, and a
        filter that keeps no row at all, which is always a mistake worth hearing about.
        """
        self.check_columns(dataset.column_names, what)
        if not self.active:
            return dataset
        rates = self.rates(dataset)
        keep = [i for i, r in enumerate(rates) if self.keeps(r)]
        if not keep:
            raise self.nothing_left(what, len(rates), sum(r is None for r in rates))
        return dataset if len(keep) == len(rates) else dataset.select(keep)

    def nothing_left(self, what: str, rows: int, unrated: int) -> ConfigError:
        """The error for a filter that left no row of ``rows``."""
        return ConfigError(
            f"no row of {what} ({rows} rows) is left after the pass-rate filter "
            f"{self.describe()} ({unrated} unrated, keep_unrated={self.keep_unrated})"
        )
