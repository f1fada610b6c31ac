"""``prime-hub``: serve, migrate, and admin commands (users, organisations, tokens)."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap

from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError

from .errors import HubError
from .settings import Settings


def _hub(settings: Settings):  # type: ignore[no-untyped-def]
    from .app import build_hub

    return build_hub(settings, migrate=True)


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    import uvicorn

    _hub(settings).db.dispose()  # migrations run once, before any worker starts
    uvicorn.run(
        "prime_hub.server:app",
        factory=True,
        host=args.host or settings.host,
        port=args.port or settings.port,
        workers=args.workers or settings.workers,
        log_level=args.log_level,
        access_log=args.access_log,
        timeout_keep_alive=30,
        backlog=2048,
    )
    return 0


class _HelpFormatter(argparse.HelpFormatter):
    """Shows an option's default when it has a meaningful one (not None, "" or False)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        help = action.help or ""
        if "default:" in help or action.default in (None, "", False, argparse.SUPPRESS):
            return help
        if not action.option_strings:
            return help
        return f"{help} (default: {action.default})"


def _settings_epilog() -> str:
    """Every setting with its variable and default: what ``serve`` reads besides its flags."""
    lines = [
        "settings (environment variables, or top-level keys of the TOML file named by",
        "PRIME_HUB_CONFIG; flags above override host, port and workers):",
    ]
    for name, field in Settings.model_fields.items():
        default = "unset" if field.default is None else json.dumps(field.default, default=str)
        lines.append(f"  PRIME_HUB_{name.upper()}  (default: {default})")
        if field.description:
            lines += textwrap.wrap(
                field.description, 88, initial_indent=" " * 6, subsequent_indent=" " * 6
            )
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    fmt = _HelpFormatter
    parser = argparse.ArgumentParser(prog="prime-hub", description=__doc__, formatter_class=fmt)
    sub = parser.add_subparsers(dest="cmd", required=True, metavar="COMMAND")

    def command(group, name: str, help: str, **kw):  # type: ignore[no-untyped-def]
        return group.add_parser(name, help=help, description=help, formatter_class=fmt, **kw)

    s = command(
        sub,
        "serve",
        "run migrations, then serve the hub over HTTP",
        epilog=_settings_epilog(),
    )
    s.formatter_class = argparse.RawDescriptionHelpFormatter  # keep the epilog's layout
    s.add_argument("--host", help="address to bind (default: PRIME_HUB_HOST, 127.0.0.1)")
    s.add_argument("--port", type=int, help="port to bind (default: PRIME_HUB_PORT, 8000)")
    s.add_argument(
        "--workers",
        type=int,
        help="server processes; each is stateless, so any number share one database and "
        "store (default: PRIME_HUB_WORKERS, 1)",
    )
    s.add_argument(
        "--log-level",
        default="info",
        choices=["critical", "error", "warning", "info", "debug", "trace"],
        help="uvicorn's log level (default: info)",
    )
    s.add_argument(
        "--access-log",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="log one line per request (default: off)",
    )
    command(sub, "migrate", "upgrade the database schema to the newest revision")
    admin = command(
        sub, "admin", "accounts, organisations, tokens and storage clean-up"
    ).add_subparsers(dest="action", required=True, metavar="ACTION")
    cu = command(admin, "create-user", "create a user account")
    cu.add_argument("username", help="the account's slug: lower-case letters, digits and '-'")
    cu.add_argument("--email", help="contact address shown to the user's organisations")
    cu.add_argument(
        "--admin",
        action="store_true",
        dest="is_admin",
        help="hub administrator: reads every environment",
    )
    co = command(admin, "create-org", "create an organisation owned by an existing user")
    co.add_argument("org", help="the organisation's slug")
    co.add_argument("--owner", required=True, help="user who becomes the org's owner")
    am = command(admin, "set-member", "add a member, change a role, or --remove")
    am.add_argument("org", help="the organisation's slug")
    am.add_argument("user", help="the member's username")
    am.add_argument(
        "--role",
        default="publisher",
        choices=["owner", "publisher", "reader"],
        help="owner: manages members; publisher: pushes; reader: installs private packages",
    )
    am.add_argument("--remove", action="store_true", help="remove the user from the org")
    ct = command(admin, "create-token", "print a new API token for a user (shown once)")
    ct.add_argument("username", help="the user the token acts as")
    ct.add_argument(
        "--scope",
        default="publish",
        choices=["read", "publish"],
        help="read: install and browse; publish: also push",
    )
    ct.add_argument("--environment", help="limit the token to one environment, owner/name")
    ct.add_argument("--name", default="", help="a label shown in token listings")
    ct.add_argument(
        "--expires-in-days", type=int, help="days until the token stops working (1-3650)"
    )
    lt = command(admin, "list-tokens", "list a user's tokens: id, scope, environment, state")
    lt.add_argument("username", help="whose tokens")
    rt = command(admin, "revoke-token", "revoke a token at once")
    rt.add_argument("token_id", type=int, help="the id list-tokens shows")
    gc = command(
        admin,
        "gc",
        "delete what crashed or abandoned uploads leave: unreferenced stored objects, "
        "partial store writes (S3: incomplete multipart uploads) and upload spool files",
    )
    gc.add_argument(
        "--grace-minutes",
        type=float,
        default=60.0,
        help="keep anything younger (it may belong to an upload still under way)",
    )
    gc.add_argument("--verbose", "-v", action="store_true", help="print each removed item")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    settings = Settings()
    try:
        if args.cmd == "serve":
            return cmd_serve(args, settings)
        hub = _hub(settings)
        if args.cmd == "migrate":
            print("database is at the newest revision")
        elif args.action == "create-user":
            u = hub.accounts.create_user(args.username, args.email, args.is_admin)
            print(f"created user {u.slug}")
        elif args.action == "create-org":
            o = hub.accounts.create_org(args.org, args.owner)
            print(f"created organisation {o.slug} owned by {args.owner}")
        elif args.action == "set-member":
            hub.accounts.set_member(args.org, args.user, None if args.remove else args.role)
            print("membership updated")
        elif args.action == "create-token":
            tok, plain = hub.accounts.create_token(
                args.username, args.scope, args.environment, args.name, args.expires_in_days
            )
            print(plain)
            print(
                f"token id {tok.id}, scope {tok.scope}, environment {tok.environment or 'all'}",
                file=sys.stderr,
            )
        elif args.action == "list-tokens":
            for t in hub.accounts.list_tokens(args.username):
                state = "revoked" if t.revoked_at else "active"
                print(f"{t.id}\t{t.scope}\t{t.environment or '*'}\t{state}\t{t.name}")
        elif args.action == "gc":
            import datetime as dt

            removed = hub.cleanup.collect_garbage(dt.timedelta(minutes=args.grace_minutes))
            if args.verbose:
                for item in removed:
                    print(item)
            print(f"removed {len(removed)} leftovers")
        elif args.action == "revoke-token":
            hub.accounts.revoke_token(args.token_id)
            print(f"revoked token {args.token_id}")
    except HubError as exc:
        print(f"error: {exc.detail}", file=sys.stderr)
        return 1
    except OperationalError as exc:  # the database is unreachable or refuses us
        url = make_url(settings.resolved_database_url).render_as_string(hide_password=True)
        print(f"error: cannot use the database at {url}: {exc.orig}", file=sys.stderr)
        print("(set PRIME_HUB_DATABASE_URL, or PRIME_HUB_DATA_DIR for SQLite)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
