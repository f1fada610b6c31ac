"""Console output: human tables on stdout, notes and progress on stderr, JSON for scripts."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

from rich import box
from rich.cells import cell_len
from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TransferSpeedColumn,
)
from rich.table import Table
from rich.text import Text

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def note(message: str) -> None:
    err.print(escape(message))


def emit_json(data: Any) -> None:
    print(json.dumps(data, indent=2, sort_keys=True, default=str))


@contextmanager
def transfer(description: str, total: int | None) -> Iterator[Any]:
    """A byte progress bar on stderr (hidden when stderr is not a terminal); yields advance()."""
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,
    )
    with progress:
        task = progress.add_task(description, total=total)
        yield lambda n: progress.advance(task, n)


def fmt_float(x: Any, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def say(message: str) -> None:
    """A plain line on stdout (no markup: names and paths are printed as they are)."""
    out.print(message, markup=False)


GAP = 2  # columns between two table columns: one of padding, one of (blank) border


@dataclass(frozen=True)
class Column:
    """One column of a `fit_table`."""

    header: str
    justify: Literal["left", "right"] = "left"
    overflow: Literal["fold", "ellipsis"] = "ellipsis"
    min_width: int | None = None  # narrowest it may get; None: never narrower than its content
    optional: bool = False  # dropped (before any other column shrinks) when space runs out


def fit_table(
    columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int, title: str | None = None
) -> RenderableType:
    """A table no wider than `width`: optional columns shrink to their minimum, then go; only
    then do the others shrink (folding or ending in "…"). rich's own fitting squeezes short
    columns such as a version down to one character, and never wraps the title."""
    visible = list(range(len(columns)))
    natural = [
        max([cell_len(c.header), *(cell_len(str(r[i])) for r in rows)])
        for i, c in enumerate(columns)
    ]
    while True:
        widths = {i: natural[i] for i in visible}
        over = sum(widths.values()) + GAP * (len(visible) - 1) - width
        optional = [i for i in visible if columns[i].optional]
        over = _shrink(widths, optional, columns, over)
        if over > 0 and optional:
            visible.remove(optional[-1])
            continue
        _shrink(widths, [i for i in visible if i not in optional], columns, over)
        break
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1, 0, 0))
    for i in visible:
        c = columns[i]
        table.add_column(
            c.header, justify=c.justify, width=widths[i], overflow=c.overflow,
            no_wrap=c.overflow == "ellipsis",
        )  # fmt: skip
    for r in rows:
        table.add_row(*(Text(str(r[i])) for i in visible))
    if title is None:
        return table
    return Group(Text(title, overflow="fold", no_wrap=False), table)


def _shrink(widths: dict[int, int], which: list[int], columns: Sequence[Column], over: int) -> int:
    """Narrow the `which` columns towards their minimum, always the widest one first (so they
    end up alike rather than one squeezed); the width still over."""
    floors = {i: min(widths[i], columns[i].min_width or widths[i]) for i in which}
    while over > 0:
        room = [i for i in which if widths[i] > floors[i]]
        if not room:
            break
        widest = max(room, key=lambda i: widths[i])
        widths[widest] -= 1
        over -= 1
    return over
