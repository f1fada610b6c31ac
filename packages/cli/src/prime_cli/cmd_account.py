"""`prime login | logout | whoami | config`: accounts and settings."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from . import config
from .app import JsonOpt, app, client, config_app, orgs_of, settings, state
from .errors import ConfigError, PrimeError, UsageError
from .output import emit_json, note, out, say


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
    orgs = ", ".join(f"{slug} ({role})" for slug, role in orgs_of(me)) or "-"
    say(
        f"{me['username']} on {settings().hub_url} · token scope {tok.get('scope')}"
        f"{' for ' + tok['environment'] if tok.get('environment') else ''} · organisations: {orgs}"
    )


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
