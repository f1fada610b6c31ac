"""Where a benchmark writes its figures, one rule for all of them: the run's ``--out``, else
the benchmark's own folder, ``results.json`` for a full run and ``results-quick.json``
(git-ignored) for a ``--quick`` smoke run, so that a smoke run never replaces the figures
its README quotes."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_options(parser: argparse.ArgumentParser, quick: str) -> None:
    """``--quick``, with `quick` saying what the smoke run does, and ``--out``."""
    parser.add_argument("--quick", action="store_true", help=quick)
    parser.add_argument(
        "--out",
        default=None,
        help="where to write the figures (default: results.json in the benchmark's folder, "
        "results-quick.json with --quick)",
    )


def results_path(args: argparse.Namespace, folder: Path) -> Path:
    """The file the figures of this run go to (see the module's docstring)."""
    if args.out:
        return Path(args.out)
    return folder / ("results-quick.json" if args.quick else "results.json")
