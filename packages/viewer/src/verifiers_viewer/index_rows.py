"""Pages of an index's rows: sorted on a column or a metric, rows without the value last, each
page a walk along an SQLite index."""

from __future__ import annotations

from typing import Any

from .index_db import IndexDb
from .query import METRIC_SORT_PREFIX, ROW_COLUMNS, SORT_COLUMNS, Filters, Row, where


class RowReader:
    def __init__(self, db: IndexDb) -> None:
        self.db = db

    def page(
        self,
        filters: Filters | None,
        sort: str,
        descending: bool,
        offset: int,
        limit: int,
        metrics: list[str] | None,
    ) -> list[Row]:
        """The page `RunIndex.rows` asks for (the defaults are its own)."""
        clauses, args = (filters or Filters()).clauses()
        direction = "DESC" if descending else "ASC"
        offset, limit = max(0, offset), max(0, limit)
        if sort.startswith(METRIC_SORT_PREFIX):
            name = sort[len(METRIC_SORT_PREFIX) :]
            valued = (
                "rollouts r JOIN metrics s ON s.line = r.line",
                [*clauses, "s.name = ?", "s.value IS NOT NULL"],
                [*args, name],
                "s.value",
            )
            missing = (
                [*clauses, "r.line NOT IN "
                 "(SELECT line FROM metrics WHERE name = ? AND value IS NOT NULL)"],
                [*args, name],
            )  # fmt: skip
        elif sort in SORT_COLUMNS and sort != "line":
            col = SORT_COLUMNS[sort]
            valued = ("rollouts r", [*clauses, f"{col} IS NOT NULL"], args, col)
            missing = ([*clauses, f"{col} IS NULL"], args)
        else:
            found = self._where("rollouts r", clauses, args, "r.line", direction, offset, limit)
            self.attach_metrics(found, metrics)
            return found
        table, vclauses, vargs, key = valued
        found = self._where(table, vclauses, vargs, key, direction, offset, limit)
        if len(found) < limit:
            if found:
                before = offset + len(found)
            else:
                before = self.db.query(f"SELECT COUNT(*) FROM {table}{where(vclauses)}", vargs)[0][
                    0
                ]
            found += self._where(
                "rollouts r", missing[0], missing[1], "r.line", direction,
                max(0, offset - before), limit - len(found),
            )  # fmt: skip
        self.attach_metrics(found, metrics)
        return found

    def _where(
        self, table: str, clauses: list[str], args: list[Any], key: str, direction: str,
        offset: int, limit: int,
    ) -> list[Row]:  # fmt: skip
        # The tie-break is the line as the sort's index holds it (metrics_value ends in s.line),
        # so SQLite walks the index instead of sorting the ties.
        tie = "s.line" if key == "s.value" else "r.line"
        order = f"{key} {direction}" + (f", {tie} {direction}" if key != "r.line" else "")
        sql = f"SELECT {ROW_COLUMNS} FROM {table}{where(clauses)} ORDER BY {order} LIMIT ? OFFSET ?"
        return [Row(*values) for values in self.db.query(sql, [*args, limit, offset])]

    def attach_metrics(self, rows: list[Row], names: list[str] | None) -> None:
        if not rows:
            return
        lines = [r.line for r in rows]
        marks = ", ".join("?" * len(lines))
        by_line = {r.line: r for r in rows}
        for line, name, value in self.db.query(
            f"SELECT line, name, value FROM metrics WHERE line IN ({marks})", lines
        ):
            if names is None or name in names:
                by_line[line].metrics[name] = value

    def one(self, line: int) -> Row | None:
        found = self.db.query(f"SELECT {ROW_COLUMNS} FROM rollouts r WHERE r.line = ?", (line,))
        if not found:
            return None
        result = Row(*found[0])
        self.attach_metrics([result], None)
        return result
