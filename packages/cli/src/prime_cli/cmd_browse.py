"""`prime env list | search | info | versions | yank | delete`."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from .app import JsonOpt, client, env_app
from .errors import UsageError
from .output import Column, emit_json, fit_table, fmt_float, out, say
from .refs import parse_ref

if TYPE_CHECKING:
    from rich.console import RenderableType


def _env_table(items: list[dict[str, Any]], title: str, width: int) -> RenderableType:
    # the name, version and visibility stay whole; the description goes first when narrow
    columns = [
        Column("environment", overflow="fold", min_width=20),
        Column("latest"),
        Column("visibility"),
        Column("downloads", justify="right"),
        Column("description", min_width=16, optional=True),
    ]
    rows = [
        [
            f"{e['owner']}/{e['name']}",
            e.get("latest_version") or "-",
            e.get("visibility") or "-",
            str(e.get("downloads", 0)),
            e.get("description") or "",
        ]
        for e in items
    ]
    return fit_table(columns, rows, width, title)


def _listing(json_: bool, **params: Any) -> None:
    with client() as c:
        body = c.list_environments(**params)
    if json_:
        emit_json(body)
        return
    items = body.get("items", [])
    shown = f"{len(items)} of {body.get('total', len(items))}"
    out.print(_env_table(items, f"environments on {c.hub_url} ({shown})", out.width))


@env_app.command("list")
def env_list(
    owner: Annotated[str | None, typer.Option(help="Only this owner's.")] = None,
    mine: Annotated[bool, typer.Option(help="Only environments you own.")] = False,
    tag: Annotated[list[str] | None, typer.Option(help="Only with this tag.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=200)] = 20,
    offset: Annotated[int, typer.Option(min=0)] = 0,
    json_: JsonOpt = False,
) -> None:
    """List environments (public ones, plus private ones your token grants)."""
    _listing(json_, owner=owner, mine=mine, tag=tag or None, limit=limit, offset=offset)


@env_app.command("search")
def env_search(
    query: str,
    limit: Annotated[int, typer.Option(min=1, max=200)] = 20,
    json_: JsonOpt = False,
) -> None:
    """Search environments by name and description."""
    _listing(json_, search=query, limit=limit)


def _versions_table(versions: list[dict[str, Any]], width: int) -> RenderableType:
    columns = [
        Column("version"),
        Column("published"),
        Column("by", overflow="fold", min_width=8),
        Column("files", overflow="fold", min_width=16),
        Column("yanked", overflow="fold", min_width=6),
    ]
    rows = [
        [
            v["version"],
            (v.get("created_at") or "")[:16].replace("T", " "),
            v.get("uploader") or "-",
            ", ".join(f["filename"] for f in v.get("files", [])),
            (v.get("yanked_reason") or "yes") if v.get("yanked") else "",
        ]
        for v in versions
    ]
    return fit_table(columns, rows, width)


def _evals_table(evals: list[dict[str, Any]], width: int) -> RenderableType:
    columns = [
        Column("version"),
        Column("model", overflow="fold", min_width=12),
        Column("reward", justify="right"),
        Column("pass@1", justify="right"),
        Column("rollouts", justify="right"),
        Column("errors", justify="right"),
        Column("by", overflow="fold", min_width=8, optional=True),
    ]
    rows = []
    for e in evals:
        mean, std = e.get("reward_mean"), e.get("reward_std")
        rows.append(
            [
                str(e.get("version", "")),
                str(e.get("model", "")),
                f"{fmt_float(mean)} ± {fmt_float(std)}",
                fmt_float((e.get("pass_at_k") or {}).get("1")),
                str(e.get("num_rollouts", "")),
                str(e.get("num_errors", "")),
                str(e.get("submitted_by", "")),
            ]
        )
    return fit_table(columns, rows, width, "evaluation results")


@env_app.command("info")
def env_info(
    ref: Annotated[str, typer.Argument(help="owner/name")],
    json_: JsonOpt = False,
) -> None:
    """Details, versions and evaluation results of one environment."""
    r = parse_ref(ref)
    with client() as c:
        env = c.environment(r)
        versions = c.versions(r)
        evals = c.evals(r, r.version)
    if json_:
        emit_json({"environment": env, "versions": versions, "evals": evals or []})
        return
    out.print(f"[bold]{escape(r.slug)}[/] · {env.get('visibility')} · {c.hub_url}/{r.slug}")
    if env.get("description"):
        say(env["description"])
    say(f"latest: {env.get('latest_version') or '-'} · downloads: {env.get('downloads', 0)}")
    say(f"install: prime env install {r.slug}")
    out.print(_versions_table(versions, out.width))
    if evals:
        out.print(_evals_table(evals, out.width))
    elif evals is not None:
        say("no evaluation results yet (prime eval ... --push adds one)")


@env_app.command("versions")
def env_versions(
    ref: Annotated[str, typer.Argument(help="owner/name")],
    json_: JsonOpt = False,
) -> None:
    """Versions of one environment, newest first."""
    r = parse_ref(ref, allow_version=False)
    with client() as c:
        versions = c.versions(r)
    if json_:
        emit_json({"versions": versions})
        return
    out.print(_versions_table(versions, out.width))


@env_app.command("yank")
def env_yank(
    ref: Annotated[str, typer.Argument(help="owner/name@version")],
    reason: Annotated[str, typer.Option(help="Shown to installers.")] = "",
    undo: Annotated[bool, typer.Option("--undo", help="Un-yank instead.")] = False,
) -> None:
    """Yank a version (installers skip it unless asked for it exactly)."""
    r = parse_ref(ref)
    if not r.version:
        raise UsageError(f"{ref!r}: say which version to yank (owner/name@version)")
    with client(need_token=True) as c:
        c.set_yanked(r, r.version, not undo, reason)
    say(f"{'un-yanked' if undo else 'yanked'} {r}")


@env_app.command("delete")
def env_delete(
    ref: Annotated[str, typer.Argument(help="owner/name or owner/name@version")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False,
) -> None:
    """Delete an environment or one version (file names are never reused)."""
    r = parse_ref(ref)
    what = f"version {r.version} of {r.slug}" if r.version else f"{r.slug} and all its versions"
    if not yes:
        if not sys.stdin.isatty():
            raise UsageError(f"refusing to delete {what} without --yes")
        typer.confirm(f"delete {what}?", abort=True)
    with client(need_token=True) as c:
        c.delete(r)
    say(f"deleted {what}")
