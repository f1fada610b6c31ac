"""``prime-hub``: serve, migrate, and admin commands (users, organisations, tokens)."""

from __future__ import annotations

import argparse
import sys

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="prime-hub", description=__doc__)
    sub = parser.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve", help="run migrations, then serve HTTP")
    s.add_argument("--host")
    s.add_argument("--port", type=int)
    s.add_argument("--workers", type=int)
    s.add_argument("--log-level", default="info")
    s.add_argument("--access-log", action=argparse.BooleanOptionalAction, default=False)
    sub.add_parser("migrate", help="upgrade the database schema to the newest revision")
    admin = sub.add_parser("admin", help="administration").add_subparsers(
        dest="action", required=True
    )
    cu = admin.add_parser("create-user")
    cu.add_argument("username")
    cu.add_argument("--email")
    cu.add_argument("--admin", action="store_true", dest="is_admin")
    co = admin.add_parser("create-org")
    co.add_argument("org")
    co.add_argument("--owner", required=True, help="user who becomes the org's owner")
    am = admin.add_parser("set-member", help="add a member, change a role, or --remove")
    am.add_argument("org")
    am.add_argument("user")
    am.add_argument("--role", default="publisher", choices=["owner", "publisher", "reader"])
    am.add_argument("--remove", action="store_true")
    ct = admin.add_parser("create-token", help="print a new token (shown once)")
    ct.add_argument("username")
    ct.add_argument("--scope", default="publish", choices=["read", "publish"])
    ct.add_argument("--environment", help="limit the token to owner/name")
    ct.add_argument("--name", default="")
    ct.add_argument("--expires-in-days", type=int)
    lt = admin.add_parser("list-tokens")
    lt.add_argument("username")
    rt = admin.add_parser("revoke-token")
    rt.add_argument("token_id", type=int)
    gc = admin.add_parser(
        "gc",
        help="delete what crashed or abandoned uploads leave: unreferenced stored objects, "
        "partial store writes (S3: incomplete multipart uploads) and upload spool files",
    )
    gc.add_argument(
        "--grace-minutes",
        type=float,
        default=60.0,
        help="keep anything younger (it may belong to an upload still under way)",
    )
    gc.add_argument("--verbose", "-v", action="store_true", help="print each removed item")
    args = parser.parse_args(argv)
    settings = Settings()
    try:
        if args.cmd == "serve":
            return cmd_serve(args, settings)
        hub = _hub(settings)
        if args.cmd == "migrate":
            print("database is at the newest revision")
        elif args.action == "create-user":
            u = hub.create_user(args.username, args.email, args.is_admin)
            print(f"created user {u.slug}")
        elif args.action == "create-org":
            o = hub.create_org(args.org, args.owner)
            print(f"created organisation {o.slug} owned by {args.owner}")
        elif args.action == "set-member":
            hub.set_member(args.org, args.user, None if args.remove else args.role)
            print("membership updated")
        elif args.action == "create-token":
            tok, plain = hub.create_token(
                args.username, args.scope, args.environment, args.name, args.expires_in_days
            )
            print(plain)
            print(
                f"token id {tok.id}, scope {tok.scope}, environment {tok.environment or 'all'}",
                file=sys.stderr,
            )
        elif args.action == "list-tokens":
            for t in hub.list_tokens(args.username):
                state = "revoked" if t.revoked_at else "active"
                print(f"{t.id}\t{t.scope}\t{t.environment or '*'}\t{state}\t{t.name}")
        elif args.action == "gc":
            import datetime as dt

            removed = hub.collect_garbage(dt.timedelta(minutes=args.grace_minutes))
            if args.verbose:
                for item in removed:
                    print(item)
            print(f"removed {len(removed)} leftovers")
        elif args.action == "revoke-token":
            hub.revoke_token(args.token_id)
            print(f"revoked token {args.token_id}")
    except HubError as exc:
        print(f"error: {exc.detail}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
