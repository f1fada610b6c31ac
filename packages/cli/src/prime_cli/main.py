"""The `prime` command line: accounts, configuration, environments and evaluations."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from . import config
from .errors import AuthError, ConfigError, PrimeError, UsageError
from .output import emit_json, err, fmt_float, note, out, say, transfer
from .refs import EnvRef, parse_ref

if TYPE_CHECKING:  # imported where used: `prime --help` stays quick
    from rich.table import Table

    from . import project
    from .client import HubClient

app = typer.Typer(
    name="prime",
    help="Create, push, install and evaluate RL environments on a prime hub.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
env_app = typer.Typer(help="Environment packages: init, build, push, install, browse.")
config_app = typer.Typer(help="Show and change settings (hub URL, token, default owner).")
app.add_typer(env_app, name="env", no_args_is_help=True)
app.add_typer(config_app, name="config", no_args_is_help=True)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]
PythonOpt = Annotated[
    str | None,
    typer.Option("--python", help="Interpreter or environment directory to install into."),
]
WithOpt = Annotated[str, typer.Option("--with", help="Installer: auto (uv, else pip), uv or pip.")]


class State:
    hub_url: str | None = None
    token: str | None = None


state = State()


@app.callback()
def _root(
    hub: Annotated[
        str | None, typer.Option("--hub", help="Hub URL (else $PRIME_HUB_URL, else the config).")
    ] = None,
    token: Annotated[
        str | None, typer.Option("--token", help="API token for this call (else $PRIME_TOKEN).")
    ] = None,
) -> None:
    state.hub_url, state.token = hub, token


def settings() -> config.Settings:
    return config.load(state.hub_url, state.token)


def client(need_token: bool = False) -> HubClient:
    from .client import HubClient

    s = settings()
    if need_token and not s.token:
        raise ConfigError(
            f"this needs an API token for {s.hub_url}: run `prime login` or set PRIME_TOKEN"
        )
    return HubClient(s.hub_url, s.token)


# ====================================================================== accounts and settings
@app.command()
def login(
    token: Annotated[str | None, typer.Option("--token", help="The API token.")] = None,
    hub: Annotated[str | None, typer.Option("--hub", help="Hub URL to log in to.")] = None,
) -> None:
    """Check a token with the hub and store it (file mode 0600)."""
    from .client import HubClient

    s = config.load(hub or state.hub_url)
    tok = token or state.token or s.token
    if not tok:
        if not sys.stdin.isatty():
            raise UsageError("no token: pass --token, set PRIME_TOKEN, or run in a terminal")
        tok = typer.prompt(f"API token for {s.hub_url}", hide_input=True).strip()
    with HubClient(s.hub_url, tok) as c:
        me = c.whoami()
    changes: dict[str, str | None] = {"token": tok}
    if hub or state.hub_url:
        changes["hub_url"] = s.hub_url
    path = config.update_file(**changes)
    scope = (me.get("token") or {}).get("scope") or "?"
    say(f"logged in to {s.hub_url} as {me['username']} (token scope {scope})")
    note(f"token stored in {path} (readable only by you)")


@app.command()
def logout(
    revoke: Annotated[bool, typer.Option(help="Also revoke the token on the hub.")] = False,
) -> None:
    """Forget the stored token (and with --revoke, invalidate it on the hub)."""
    from .client import HubClient

    s = settings()
    if revoke:
        if not s.token:
            raise ConfigError("no token to revoke")
        with HubClient(s.hub_url, s.token) as c:
            token_id = (c.whoami().get("token") or {}).get("id")
            if token_id is None:
                raise PrimeError("the hub did not say which token this is; nothing revoked")
            c.revoke_token(int(token_id))
        say(f"revoked token {token_id} on {s.hub_url}")
    config.update_file(token=None)
    say("logged out")


@app.command()
def whoami(json_: JsonOpt = False) -> None:
    """The account and token the hub sees."""
    with client(need_token=True) as c:
        me = c.whoami()
    if json_:
        emit_json(me)
        return
    tok = me.get("token") or {}
    orgs = ", ".join(f"{slug} ({role})" for slug, role in _orgs(me)) or "-"
    say(
        f"{me['username']} on {settings().hub_url} · token scope {tok.get('scope')}"
        f"{' for ' + tok['environment'] if tok.get('environment') else ''} · organisations: {orgs}"
    )


def _orgs(me: dict[str, Any]) -> list[tuple[str, str]]:
    """(slug, role) of the organisations in a whoami answer."""
    out = []
    for o in me.get("organizations") or []:
        if isinstance(o, dict):
            out.append((str(o.get("slug")), str(o.get("role") or "?")))
        else:
            out.append((str(o), "?"))
    return out


def _masked(token: str | None) -> str | None:
    if not token:
        return None
    return token[:9] + "…" + token[-4:] if len(token) > 16 else "…"


@config_app.command("show")
def config_show(json_: JsonOpt = False) -> None:
    """Effective settings and where each comes from."""
    from rich.table import Table

    s = settings()
    rows = {
        "hub_url": (s.hub_url, s.sources["hub_url"]),
        "token": (_masked(s.token), s.sources["token"]),
        "owner": (s.owner, s.sources["owner"]),
    }
    if json_:
        emit_json({"file": str(config.config_path()), **{k: v for k, (v, _) in rows.items()}})
        return
    table = Table("setting", "value", "from", title=str(config.config_path()))
    for key, (value, source) in rows.items():
        table.add_row(key, value or "-", source)
    out.print(table)


@config_app.command("set")
def config_set(key: str, value: str) -> None:
    """Store a setting: hub_url, token or owner."""
    if key == "hub_url":
        config.load(hub_url=value)  # validates
    path = config.update_file(**{key: value})
    say(f"{key} set in {path}")


@config_app.command("unset")
def config_unset(key: str) -> None:
    """Remove a setting from the file."""
    path = config.update_file(**{key: None})
    say(f"{key} removed from {path}")


# ====================================================================== authoring
@env_app.command("init")
def env_init(
    name: str,
    path: Annotated[Path, typer.Option("--path", "-p", help="Parent folder.")] = Path("."),
    description: Annotated[str | None, typer.Option(help="One-line description.")] = None,
) -> None:
    """Create a new environment package (pyproject, module, README, test)."""
    from .scaffold import init_environment

    target = init_environment(name, path, description)
    say(f"created {target}")
    note(f"next: cd {target} && uv pip install -e . && pytest tests && prime env push")


def _build_checked(proj: project.Project, out_dir: Path) -> tuple[list[Path], str]:
    from . import project

    files = project.build(proj, out_dir)
    provider = project.check_wheel(files[0], proj.name)
    return files, provider


@env_app.command("build")
def env_build(
    path: Annotated[Path, typer.Argument(help="The package folder.")] = Path("."),
    out_dir: Annotated[Path | None, typer.Option("--out", "-o", help="Output folder.")] = None,
) -> None:
    """Build the wheel and sdist and check that they provide load_environment()."""
    from . import project

    proj = project.read_project(path)
    files, provider = _build_checked(proj, out_dir or path / "dist")
    for f in files:
        say(f"built {f}")
    note(f"load_environment() found in {provider}")


@env_app.command("push")
def env_push(
    path: Annotated[Path, typer.Argument(help="The package folder.")] = Path("."),
    owner: Annotated[
        str | None, typer.Option("--owner", help="User or organisation to publish under.")
    ] = None,
    visibility: Annotated[
        str | None, typer.Option("--visibility", help="public or private (new environments).")
    ] = None,
    bump: Annotated[
        str | None, typer.Option("--bump", help="Raise [project].version first: patch, minor, rc.")
    ] = None,
    allow_dirty: Annotated[
        bool, typer.Option("--allow-dirty", help="Push despite uncommitted git changes.")
    ] = False,
    json_: JsonOpt = False,
) -> None:
    """Build, check and publish a new version (wheel + sdist in one transaction)."""
    from . import project

    if visibility is not None and visibility.lower() not in ("public", "private"):
        raise UsageError(f"--visibility must be public or private, not {visibility!r}")
    if bump is not None and bump not in ("patch", "minor", "rc"):
        raise UsageError(f"--bump must be patch, minor or rc, not {bump!r}")
    proj = project.read_project(path)
    dirty = project.git_dirty(path)
    if dirty and not allow_dirty:
        shown = ", ".join(dirty[:3]) + (" …" if len(dirty) > 3 else "")
        raise project.PackageError(
            f"{path} has uncommitted changes ({shown}): commit them or pass --allow-dirty"
        )
    with client(need_token=True) as c:
        me = c.whoami()
        who = owner or settings().owner or str(me["username"])
        mine = [me["username"], *(o for o, role in _orgs(me) if role in ("owner", "publisher"))]
        # the hub decides; asking first only saves a build that it would refuse
        if who not in mine and not me.get("is_admin"):
            raise AuthError(
                f"not allowed: {me['username']} cannot publish under {who!r} "
                f"(you can publish under: {', '.join(mine)})",
                403,
            )
        pyproject = path / "pyproject.toml"
        original = pyproject.read_text()
        try:
            old_version = proj.version
            if bump:
                project.bump_version(proj, bump)
                proj = project.read_project(path)
            with tempfile.TemporaryDirectory(prefix="prime-build-") as tmp:
                files, provider = _build_checked(proj, Path(tmp))
                total = sum(f.stat().st_size for f in files)
                with transfer(f"uploading {proj.name} {proj.version}", total) as advance:
                    body, status = c.publish(
                        who,
                        proj.name,
                        files,
                        visibility=visibility and visibility.lower(),
                        progress=advance,
                    )
        except BaseException:
            if bump:  # nothing was published: the bump is undone
                pyproject.write_text(original)
            raise
    if bump:
        note(f"version {old_version} -> {proj.version} (pyproject.toml [project].version)")
    page = f"{c.hub_url}/{who}/{proj.name}"
    if json_:
        emit_json({**body, "owner": who, "name": proj.name, "page": page})
        return
    state_word = "published" if status == 201 else "already published (identical files)"
    say(f"{state_word} {who}/{proj.name} {proj.version} ({provider})")
    say(f"page:    {page}")
    say(f"install: prime env install {who}/{proj.name}@{proj.version}")


# ====================================================================== installing
@env_app.command("install")
def env_install(
    refs: Annotated[list[str], typer.Argument(help="owner/name[@version] ...")],
    python: PythonOpt = None,
    tool: WithOpt = "auto",
    verbose: Annotated[bool, typer.Option("--verbose", "-v")] = False,
) -> None:
    """Install environments from the hub into the active Python environment."""
    from . import installer

    parsed = list(dict.fromkeys(parse_ref(r) for r in refs))
    target = installer.find_target(python)
    with client() as c:
        artifacts = []
        for ref in parsed:
            version = c.resolve_version(ref)
            art = installer.pick_file(ref, version)
            if art.yanked:
                note(f"warning: {ref.slug} {art.version} is yanked: {version.get('yanked_reason')}")
            size = next(
                (f["size"] for f in version["files"] if f["filename"] == art.filename), None
            )
            with transfer(f"downloading {art.filename}", size) as advance:
                installer.fetch(c, art, advance)
            artifacts.append(art)
        info = installer.probe(target, [installer.SDK])
        plan = installer.plan(c, artifacts, info["dists"])
    tool_name = installer.choose_tool(tool, target, info["pip"])
    for n in plan.notes:
        note(n)
    installer.run_installer(
        tool_name, target, plan.files, plan.constraints, echo=note if verbose else None
    )
    after = installer.probe(target, [a.dist for a in artifacts])["dists"]
    for a in artifacts:
        got = after.get(a.dist)
        if got != a.version:
            raise installer.InstallError(
                f"after installing, {target.python} has {a.dist} {got or 'missing'}, not the "
                f"hub's {a.version}"
            )
        say(
            f"installed {a.ref.slug} {a.version} (sha256 {a.sha256[:12]}…) with {tool_name} "
            f"into {target}"
        )
    if target.how.startswith("project environment"):
        note(
            "note: this is a uv project's .venv; `uv sync` removes packages the project does "
            "not declare"
        )


@env_app.command("uninstall")
def env_uninstall(
    names: Annotated[list[str], typer.Argument(help="owner/name or name ...")],
    python: PythonOpt = None,
    tool: WithOpt = "auto",
) -> None:
    """Remove installed environment packages."""
    from . import installer

    target = installer.find_target(python)
    info = installer.probe(target, [])
    tool_name = installer.choose_tool(tool, target, info["pip"])
    dists = [installer.normalize(n.split("@")[0].split("/")[-1]) for n in names]
    installer.uninstall(tool_name, target, dists)
    say(f"uninstalled {', '.join(dists)} from {target}")


@env_app.command("pull")
def env_pull(
    ref: Annotated[str, typer.Argument(help="owner/name[@version]")],
    target: Annotated[Path | None, typer.Option("--target", "-t", help="Folder.")] = None,
) -> None:
    """Download an environment's source into a folder (safely extracted)."""
    from . import installer
    from .archive import safe_extract

    r = parse_ref(ref)
    with client() as c:
        version = c.resolve_version(r)
        sdists = [f for f in version.get("files", []) if f.get("kind") == "sdist"]
        if not sdists:
            raise PrimeError(f"{r.slug} {version['version']} has no source archive")
        f = sdists[0]
        dest = target or Path(installer.normalize(r.name).replace("-", "_"))
        if dest.exists() and any(dest.iterdir()):
            raise UsageError(f"{dest} exists and is not empty; choose another --target")
        with tempfile.TemporaryDirectory(prefix="prime-pull-") as tmp:
            archive = Path(tmp) / f["filename"]
            with transfer(f"downloading {f['filename']}", f.get("size")) as advance:
                c.download(f["url"], archive, f["sha256"], advance)
            written = safe_extract(archive, dest)
    say(f"pulled {r.slug} {version['version']} into {dest} ({len(written)} files)")


# ====================================================================== browsing
def _env_table(items: list[dict[str, Any]], title: str) -> Table:
    from rich.table import Table

    table = Table(title=title)
    table.add_column("environment", no_wrap=True)
    for col in ("latest", "visibility", "downloads"):
        table.add_column(col, no_wrap=True)
    table.add_column("description", no_wrap=True, overflow="ellipsis", max_width=60)
    for e in items:
        table.add_row(
            f"{e['owner']}/{e['name']}",
            e.get("latest_version") or "-",
            e.get("visibility") or "-",
            str(e.get("downloads", 0)),
            escape(e.get("description") or ""),
        )
    return table


def _listing(json_: bool, **params: Any) -> None:
    with client() as c:
        body = c.list_environments(**params)
    if json_:
        emit_json(body)
        return
    items = body.get("items", [])
    shown = f"{len(items)} of {body.get('total', len(items))}"
    out.print(_env_table(items, f"environments on {c.hub_url} ({shown})"))


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


def _versions_table(versions: list[dict[str, Any]]) -> Table:
    from rich.table import Table

    table = Table()
    for col in ("version", "published", "by"):
        table.add_column(col, no_wrap=True)
    table.add_column("files", overflow="fold")
    table.add_column("yanked")
    for v in versions:
        table.add_row(
            v["version"],
            (v.get("created_at") or "")[:19],
            v.get("uploader") or "-",
            ", ".join(f["filename"] for f in v.get("files", [])),
            escape(v.get("yanked_reason") or "yes") if v.get("yanked") else "",
        )
    return table


def _evals_table(evals: list[dict[str, Any]]) -> Table:
    from rich.table import Table

    table = Table(title="evaluation results")
    table.add_column("version", no_wrap=True)
    table.add_column("model", overflow="fold")
    for col in ("reward", "pass@1", "rollouts", "errors"):
        table.add_column(col, no_wrap=True, justify="right")
    table.add_column("by", overflow="fold")
    for e in evals:
        mean, std = e.get("reward_mean"), e.get("reward_std")
        table.add_row(
            str(e.get("version", "")),
            escape(str(e.get("model", ""))),
            f"{fmt_float(mean)} ± {fmt_float(std)}",
            fmt_float((e.get("pass_at_k") or {}).get("1")),
            str(e.get("num_rollouts", "")),
            str(e.get("num_errors", "")),
            escape(str(e.get("submitted_by", ""))),
        )
    return table


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
    out.print(_versions_table(versions))
    if evals:
        out.print(_evals_table(evals))
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
    out.print(_versions_table(versions))


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


# ====================================================================== evaluating
@app.command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def eval(
    ctx: typer.Context,
    env: Annotated[
        str | None, typer.Argument(help="Environment id (owner/name[@version] for --push).")
    ] = None,
    push: Annotated[bool, typer.Option("--push", help="Attach the run's summary on the hub.")] = (
        False
    ),
    results: Annotated[
        Path | None,
        typer.Option("--results", help="Push this finished run directory instead of running."),
    ] = None,
    hub_env: Annotated[
        str | None, typer.Option("--env", help="owner/name[@version] the results belong to.")
    ] = None,
    python: PythonOpt = None,
) -> None:
    """Run vf-eval (options after ENV go to it); with --push, attach the summary on the hub."""
    from . import evalrun

    if results is None:
        if env is None:
            raise UsageError("give an environment to evaluate (or --results DIR with --push)")
        run_dir = _run_vf_eval(env, list(ctx.args), python)
        if not push:
            return
    else:
        if not push:
            raise UsageError("--results only makes sense with --push")
        run_dir = results
    meta = evalrun.read_run(run_dir)
    ref_text = hub_env or env or str(meta.get("env_id") or "")
    s = settings()
    r = parse_ref(ref_text, default_owner=s.owner)
    record = evalrun.eval_record(meta, run_dir)
    with client(need_token=True) as c:
        version = r.version or _installed_version(r, python)
        if version is None:
            version = c.resolve_version(r)["version"]
            note(f"{r.slug} is not installed here; attaching to the latest version {version}")
        stored = c.post_eval(r, version, record)
    say(
        f"pushed eval {stored.get('id')} for {r.slug} {version}: model {record['model']}, "
        f"reward {fmt_float(record['reward_mean'])} over {record['num_rollouts']} rollouts"
    )


def _installed_version(r: EnvRef, python: str | None) -> str | None:
    from . import installer

    try:
        target = installer.find_target(python)
    except installer.InstallError:
        return None
    return installer.probe(target, [installer.dist_name(r)])["dists"].get(installer.dist_name(r))


def _run_vf_eval(env: str, args: list[str], python: str | None) -> Path:
    import shutil
    import subprocess

    from . import evalrun, installer

    try:
        cmd = [str(installer.find_target(python).python), "-m", "verifiers.cli.eval"]
    except installer.InstallError:
        found = shutil.which("vf-eval")
        if found is None:
            raise PrimeError(
                "vf-eval not found: activate the environment that has verifiers, or pass --python"
            ) from None
        cmd = [found]
    output_dir = Path("outputs")
    for i, a in enumerate(args):
        if a in ("-o", "--output-dir") and i + 1 < len(args):
            output_dir = Path(args[i + 1])
        elif a.startswith("--output-dir="):
            output_dir = Path(a.split("=", 1)[1])
    started = evalrun.now()
    rc = subprocess.run([*cmd, env, *args]).returncode
    if rc != 0:
        raise PrimeError(f"vf-eval exited with status {rc}; nothing pushed")
    run_dir = evalrun.latest_run(output_dir, started)
    if run_dir is None:
        raise PrimeError(f"vf-eval wrote no run under {output_dir}/evals (was --no-save given?)")
    return run_dir


# ====================================================================== entry point
def main(argv: list[str] | None = None) -> int:
    command = typer.main.get_command(app)
    try:
        result = command.main(args=argv, prog_name="prime", standalone_mode=False)
    except PrimeError as e:
        err.print(f"error: {escape(e.message)}", highlight=False)
        return e.exit_code
    except typer.Exit as e:
        return e.exit_code
    except typer.Abort:
        err.print("aborted")
        return 130
    except typer.TyperException as e:  # the command line did not parse
        if type(e).__name__ == "NoArgsIsHelpError":
            e.show()  # type: ignore[attr-defined]
            return 2
        ctx = getattr(e, "ctx", None)
        where = ctx.command_path if ctx is not None else "prime"
        message = e.format_message() if hasattr(e, "format_message") else str(e)
        err.print(f"error: {escape(message)} (see `{where} --help`)")
        return 2
    except KeyboardInterrupt:
        err.print("interrupted")
        return 130
    return result if isinstance(result, int) else 0


if __name__ == "__main__":
    raise SystemExit(main())
