"""Console output: human tables on stdout, notes and progress on stderr, JSON for scripts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TransferSpeedColumn,
)

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
