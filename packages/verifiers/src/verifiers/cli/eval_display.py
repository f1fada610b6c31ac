"""What `vf-eval` prints: the progress bar, the summary table, one example, the errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def make_progress(disabled: bool) -> Any:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("reward {task.fields[reward]}"),
        TextColumn("errors {task.fields[errors]}"),
        TimeElapsedColumn(),
        disable=disabled,
        transient=False,
    )


def print_summary(
    console: Any, title: str, summary: dict[str, Any], elapsed: float, run_dir: Path | None
) -> None:
    """The summary table; with no scored rollout, no mean reward and the first error instead;
    for an `EnvGroup`, one section per member. The results path goes on a line of its own
    (a table cell would cut it at the terminal's width, and it must stay copyable)."""
    from rich.table import Table

    table = Table(title=title, show_header=False)
    table.add_row("rollouts", _rollouts(summary))
    table.add_row("reward", _reward(summary))
    for k, v in summary["pass_at_k"].items():
        table.add_row(f"pass@{k}", f"{v:.4f}")
    by_env = summary.get("by_env")
    if by_env is None:
        for name, value in summary["avg_metrics"].items():
            table.add_row(f"metric {name}", f"{value:.4f}")
    table.add_row("errors", _errors(summary))
    usage = summary["usage"]
    table.add_row(
        "tokens",
        f"{usage.get('input_tokens', 0)} in / {usage.get('output_tokens', 0)} out",
    )
    table.add_row("wall time", f"{elapsed:.2f}s")
    for name, member in (by_env or {}).items():
        # Each member's metrics over its own rollouts: the group fills the metrics of the
        # other members with 0.0, so pooled means would mix in rollouts a metric never saw.
        table.add_section()
        table.add_row(f"env {name}", f"{_rollouts(member, ' rollouts')}, reward {_reward(member)}")
        for metric, value in member["avg_metrics"].items():
            table.add_row(f"  metric {metric}", f"{value:.4f}")
        if member["errors"]:
            table.add_row("  errors", _errors(member))
    console.print(table)
    if not summary["scored_rollouts"] and summary["num_rollouts"]:
        console.print(
            f"no mean reward: none of the {summary['num_rollouts']} rollouts was scored; "
            f"first error: {summary.get('first_error', 'none recorded')}",
            markup=False,
            highlight=False,
        )
    if run_dir is not None:
        console.print("results:", highlight=False)
        print_path(console, run_dir)


def print_path(console: Any, path: Path | str) -> None:
    """A path on a line of its own, never wrapped or cut (so it can be copied whole)."""
    console.print(str(path), overflow="ignore", crop=False, soft_wrap=True, markup=False,
                  highlight=False)  # fmt: skip


def _rollouts(summary: dict[str, Any], unit: str = "") -> str:
    n, scored = summary["num_rollouts"], summary["scored_rollouts"]
    return f"{n}{unit}" if scored == n else f"{n}{unit} ({scored} scored, {n - scored} failed)"


def _reward(summary: dict[str, Any]) -> str:
    if not summary["scored_rollouts"]:
        return "none (no rollout scored)"
    return f"{summary['avg_reward']:.4f} ± {summary['std_reward']:.4f}"


def _errors(summary: dict[str, Any]) -> str:
    errors = summary["errors"]
    return ", ".join(f"{k}: {v}" for k, v in sorted(errors.items(), key=str)) if errors else "none"


def _text(messages: Any, limit: int = 600) -> str:
    """The last message's text of a prompt or completion (a string or a message list)."""
    if isinstance(messages, list):
        messages = messages[-1] if messages else ""
    if isinstance(messages, dict):
        content = messages.get("content")
        if isinstance(content, list):  # content parts
            content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        messages = content or ""
    text = str(messages)
    return text if len(text) <= limit else text[:limit] + " …"


def print_example(console: Any, outputs: list[dict[str, Any]]) -> None:
    """The first rollout's prompt, completion and reward (upstream's summary shows one too)."""
    from rich.markup import escape

    if not outputs:
        return
    o = outputs[0]
    console.print("[bold]example[/]", highlight=False)
    console.print(f"prompt: {escape(_text(o.get('prompt')))}", highlight=False)
    console.print(f"completion: {escape(_text(o.get('completion')))}", highlight=False)
    console.print(f"reward: {o.get('reward')}", highlight=False)


def print_errors(console: Any, outputs: list[dict[str, Any]]) -> None:
    """Each error type once, with its first message."""
    from rich.markup import escape

    first: dict[str, str] = {}
    for o in outputs:
        err = o.get("error")
        if err and err.get("error") not in first:
            first[err["error"]] = err.get("message", "")
    for name, message in first.items():
        console.print(f"[red]{escape(name)}[/]: {escape(message)}", highlight=False)
