"""The Typer applications, shared options, and the hub client built from the settings."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from . import config
from .errors import ConfigError

if TYPE_CHECKING:  # imported where used: `prime --help` stays quick
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


def orgs_of(me: dict[str, Any]) -> list[tuple[str, str]]:
    """(slug, role) of the organisations in a whoami answer."""
    out = []
    for o in me.get("organizations") or []:
        if isinstance(o, dict):
            out.append((str(o.get("slug")), str(o.get("role") or "?")))
        else:
            out.append((str(o), "?"))
    return out
