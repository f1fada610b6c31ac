"""Web pages: home with search and tags, owner pages, environment pages, a source browser,
sign-in with a token and token management. Server-rendered; usable without JavaScript."""

from __future__ import annotations

import math
from collections.abc import Callable, Coroutine, Hashable
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.routing import APIRoute
from fastapi.templating import Jinja2Templates
from markupsafe import Markup
from sqlalchemy import bindparam, func, select
from starlette.convertors import Convertor, register_url_convertor

from ..auth import Principal
from ..core.queries import ListingRow, compiled
from ..db.models import Account, Environment, Tag
from ..deps import base_url, hub_of
from ..errors import HubError, NotFound
from ..evals import EvalResults, eval_view
from ..lean_listings import Viewer, listing_route
from ..listing_items import MEMO_SIZE, RowDecoder, decoder_for
from ..names import RESERVED_SLUGS, normalize
from ..service import Hub
from ..uploads import closing_error, small_form_request
from ..views import install_commands, iso, page_install_commands
from ..web import evals_view
from ..web.markdown import render_readme
from ..web.session import (
    authenticate_or_anonymous,
    check_csrf,
    cookie_token,
    csrf_for,
    csrf_value,
    sign_in,
    sign_out,
    web_principal,
)
from ..web.source import as_text, open_archive, source_file

PAGE_SIZE = 20


async def _mark_html(request: Request) -> None:
    """Errors on these routes are shown as pages, not JSON. (A coroutine: FastAPI runs a
    plain function dependency in a worker thread, a hop on every page.)"""
    request.state.html_errors = True


WEB_FORM_LIMIT = 64 * 1024  # sign-in, sign-out, token forms: a few short fields


class _SmallFormRoute(APIRoute):
    """Every POST of the web pages reads its (urlencoded, small) body under a cap first:
    FastAPI would otherwise parse any multipart body sent to a form route, without limit."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def capped(request: Request) -> Response:
            if request.method != "POST":
                return await handler(request)
            try:
                request = await small_form_request(request, WEB_FORM_LIMIT)
            except HubError as exc:
                return closing_error(exc)
            return await handler(request)

        return capped


router = APIRouter(
    tags=["web"],
    include_in_schema=False,
    dependencies=[Depends(_mark_html)],
    route_class=_SmallFormRoute,
)
# The home and owner pages on a router of their own that the app includes first: routes are
# tried in order, and trying every API route before a page (~60 patterns) cost ~0.3 ms.
# "/" matches no other route. An owner page is taken early only under a name that can be
# nothing else: a valid owner name the hub does not reserve (every first path segment the
# hub routes is reserved: test_web checks it); any other "/x" goes down the routes as
# before, to the same page at the end of `router`.
first_router = APIRouter(
    tags=["web"],
    include_in_schema=False,
    dependencies=[Depends(_mark_html)],
    route_class=_SmallFormRoute,
)


class _OwnerName(Convertor[str]):
    regex = (
        "(?!(?:"
        + "|".join(sorted(RESERVED_SLUGS))
        + ")$)[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?"  # names.validate_slug's rule
    )

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("owner_name", _OwnerName())
templates = Jinja2Templates(directory=str(Path(__file__).parent.parent / "templates"))
# the templates ship with the package: no stat() of each file per page to notice an edit
templates.env.auto_reload = False
templates.env.filters["size"] = lambda n: _human_size(n)
templates.env.filters["date"] = lambda t: t.strftime("%Y-%m-%d") if t else ""
templates.env.filters["num"] = lambda x: "–" if x is None else f"{x:.3f}"
templates.env.globals.update(
    pass_at_k=evals_view.fmt_pass_at_k, metrics=evals_view.fmt_metrics, iso=iso, quote=quote
)
templates.env.globals["install_commands"] = page_install_commands  # views.py: one place


def _human_size(n: int | None) -> str:
    if n is None:
        return ""
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size} B"


def _render(
    request: Request, principal: Principal, template: str, status: int = 200, **ctx: Any
) -> HTMLResponse:
    ctx.update(
        me=principal.user.slug if principal.user else None,
        csrf=csrf_value(request) if principal.user else "",
    )
    return templates.TemplateResponse(request, template, ctx, status_code=status)


def error_page(request: Request, exc: HubError) -> HTMLResponse:
    return _render(
        request,
        web_principal(request),
        "error.html",
        status=exc.status_code,
        message=exc.detail,
        status_code=exc.status_code,
    )


def _safe_next(target: str | None) -> str:
    # Only same-site paths: never an open redirect.
    if not target or not target.startswith("/") or target.startswith("//"):
        return "/"
    return target


def _pages(total: int, page: int) -> dict[str, int]:
    return {"page": page, "pages": max(1, math.ceil(total / PAGE_SIZE)), "total": total}


@lru_cache(maxsize=MEMO_SIZE)
def _entry_html(decoder: RowDecoder, row: ListingRow) -> Markup:
    """One environment's card on the listing pages, memoised by its row (`listing_items`)."""
    env, latest = decoder.listed(row)
    entry: Markup = templates.env.get_template("_env_entry.html").module.entry(env, latest)  # type: ignore[attr-defined]
    return entry


def _cards(hub: Hub, rows: list[ListingRow]) -> list[Markup]:
    """A listing page's cards."""
    decoder = decoder_for(hub.db.read_engine.dialect)
    return [_entry_html(decoder, row) for row in rows]


# A listing page around its cards (the frame: the layout, the owner or search form, the page
# links), kept as the text before and after the cards, rendered once per frame context: a
# change to one environment re-renders its card, not the page.
_CARDS_HERE = Markup("\x00cards\x00")
_FRAMES_KEPT = 512  # a page frame is a few KB
_frames: dict[Hashable, tuple[str, str]] = {}


def _listing_page(viewer: Viewer, template: str, entries: list[Markup], **ctx: Any) -> HTMLResponse:
    """A listing page (home, owner) for ``viewer``: what `_render` gives, from the viewer
    rather than the request, so that the listing cache can build it (`lean_listings`)."""
    signed_in = viewer.principal.user
    ctx.update(
        me=signed_in.slug if signed_in else None,
        csrf=csrf_for(viewer.session_token) if signed_in else "",
        entries=bool(entries),
    )
    # str.join: a str operand of Markup's + would be escaped (a call per card)
    cards = "".join(["\n  ", "\n  ".join(entries)]) if entries else ""
    if not entries:
        return HTMLResponse(templates.get_template(template).render(ctx, cards=""))
    key = (template, *((k, _frozen(v)) for k, v in sorted(ctx.items())))
    frame = _frames.get(key)
    if frame is None:
        parts = templates.get_template(template).render(ctx, cards=_CARDS_HERE).split(_CARDS_HERE)
        if len(parts) != 2:  # the marker in the page's own text: render it whole
            return HTMLResponse(templates.get_template(template).render(ctx, cards=Markup(cards)))
        if len(_frames) >= _FRAMES_KEPT:
            _frames.clear()
        frame = _frames[key] = (parts[0], parts[1])
    return HTMLResponse(frame[0] + cards + frame[1])


def _frozen(value: Any) -> Hashable:
    """A context value as part of a frame's key (lists as tuples)."""
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    assert isinstance(value, Hashable)
    return value


def _page_viewer(request: Request) -> Viewer:
    return Viewer(web_principal(request), base_url(request), cookie_token(request) or "")


# the home page's tag cloud: the 30 most used tags of public environments
_PUBLIC_TAGS = (
    select(Tag.tag, func.count())
    .join(Environment, Environment.id == Tag.environment_id)
    .where(Environment.visibility == "public")
    .group_by(Tag.tag)
    .order_by(func.count().desc(), Tag.tag)
    .limit(30)
)
# what the owner page shows of the owner
_OWNER = select(Account.slug, Account.kind, Account.display_name).where(
    Account.slug == bindparam("slug", required=False)
)


class _Owner(NamedTuple):
    slug: str
    kind: str
    display_name: str | None


@listing_route(first_router.get("/", response_class=HTMLResponse), viewer=_page_viewer)
def home(
    hub: Hub,
    viewer: Viewer,
    *,
    q: str | None = None,
    tag: list[str] = Query(default=[]),
    page: int = Query(default=1, ge=1),
) -> HTMLResponse:
    """The home page: search, tags, the most recently updated environments."""
    dialect = hub.db.read_engine.dialect
    with hub.db.read_cursor() as cur:  # one checkout and one snapshot for the page's queries
        rows, total = hub.queries.listing_rows(
            viewer.principal,
            search=q or None,
            tags=tag,
            sort="updated_at",
            limit=PAGE_SIZE,
            offset=(page - 1) * PAGE_SIZE,
            cursor=cur,
        )
        tags = [(t, n) for t, n in compiled(_PUBLIC_TAGS, dialect).run(cur).fetchall()]
    query = urlencode([("q", q or "")] + [("tag", t) for t in tag])
    return _listing_page(
        viewer,
        "home.html",
        _cards(hub, rows),
        q=q or "",
        selected_tags=tag,
        tags=tags,
        query=query,
        **_pages(total, page),
    )


@router.get("/login", response_class=HTMLResponse)
def login_form(request: Request, next: str | None = None) -> HTMLResponse:
    return _render(request, web_principal(request), "login.html", next=_safe_next(next), error="")


@router.post("/login")
def login(request: Request, token: str = Form(""), next: str = Form("/")) -> Response:
    principal = authenticate_or_anonymous(request, token.strip() or None)
    if principal.user is None:
        return _render(
            request,
            Principal(),
            "login.html",
            status=401,
            next=_safe_next(next),
            error="That token is not valid (unknown, revoked or expired).",
        )
    response = RedirectResponse(_safe_next(next), status_code=303)
    sign_in(request, response, token.strip())
    return response


@router.post("/logout")
def logout(request: Request, csrf: str = Form("")) -> Response:
    check_csrf(request, csrf)
    response = RedirectResponse("/", status_code=303)
    sign_out(response)
    return response


def _signed_in(request: Request) -> Principal | RedirectResponse:
    principal = web_principal(request)
    if principal.user is None:
        return RedirectResponse(f"/login?next={quote(request.url.path)}", status_code=303)
    return principal


@router.get("/settings/tokens", response_class=HTMLResponse)
def tokens_page(request: Request) -> Response:
    principal = _signed_in(request)
    if isinstance(principal, RedirectResponse):
        return principal
    return _tokens(request, principal)


def _tokens(
    request: Request, principal: Principal, created: str = "", error: str = "", status: int = 200
) -> HTMLResponse:
    assert principal.user is not None
    tokens = sorted(
        hub_of(request).accounts.list_tokens(principal.user.slug), key=lambda t: t.id, reverse=True
    )
    current = principal.token.id if principal.token else None
    return _render(
        request,
        principal,
        "tokens.html",
        status=status,
        tokens=tokens,
        current=current,
        session_token=principal.token,
        created=created,
        error=error,
    )


@router.post("/settings/tokens", response_class=HTMLResponse)
def create_token(
    request: Request,
    csrf: str = Form(""),
    name: str = Form(""),
    scope: str = Form("read"),
    environment: str = Form(""),
    expires_in_days: str = Form(""),
) -> Response:
    principal = _signed_in(request)
    if isinstance(principal, RedirectResponse):
        return principal
    check_csrf(request, csrf)
    assert principal.user is not None
    try:
        days = int(expires_in_days) if expires_in_days.strip() else None
    except ValueError:
        return _tokens(request, principal, error="expiry must be a number of days", status=400)
    try:  # the same rule as the JSON API: at most the rights of the signed-in token
        _, plain = hub_of(request).accounts.mint_token(
            principal,
            scope=scope,
            environment=environment.strip() or None,
            name=name.strip()[:100],
            expires_in_days=days,
        )
    except HubError as e:
        return _tokens(request, principal, error=e.detail, status=e.status_code)
    return _tokens(request, principal, created=plain, status=201)


@router.post("/settings/tokens/{token_id}/revoke")
def revoke_token(request: Request, token_id: int, csrf: str = Form("")) -> Response:
    principal = _signed_in(request)
    if isinstance(principal, RedirectResponse):
        return principal
    check_csrf(request, csrf)
    try:  # the same rule as the JSON API: at most the rights of the signed-in token
        hub_of(request).accounts.revoke_token(token_id, by=principal)
    except HubError as e:
        return _tokens(request, principal, error=e.detail, status=e.status_code)
    return RedirectResponse("/settings/tokens", status_code=303)


@listing_route(
    first_router.get("/{owner:owner_name}", response_class=HTMLResponse),
    router.get("/{owner}", response_class=HTMLResponse),
    viewer=_page_viewer,
    path=("owner",),
)
def owner_page(
    hub: Hub, viewer: Viewer, owner: str, *, page: int = Query(default=1, ge=1)
) -> HTMLResponse:
    """An owner's page: its environments by name."""
    with hub.db.read_cursor() as cur:  # one checkout and one snapshot for the page's queries
        found = compiled(_OWNER, hub.db.read_engine.dialect).run(cur, slug=owner).fetchone()
        if found is None:
            raise NotFound(f"no user or organisation named {owner}")
        account = _Owner(*found)
        rows, total = hub.queries.listing_rows(
            viewer.principal,
            owner=owner,
            sort="name",
            order="asc",
            limit=PAGE_SIZE,
            offset=(page - 1) * PAGE_SIZE,
            cursor=cur,
        )
    pass_through = hub.settings.upstream is not None
    return _listing_page(
        viewer,
        "owner.html",
        _cards(hub, rows),
        account=account,
        install=install_commands(viewer.base, owner, rows[0].name, pass_through) if rows else [],
        query="",
        **_pages(total, page),
    )


@router.get("/{owner}/{name}", response_class=HTMLResponse)
def environment_page(request: Request, owner: str, name: str) -> HTMLResponse:
    hub = hub_of(request)
    principal = web_principal(request)
    env = hub.queries.get_environment(principal, owner, name)
    versions = hub.queries.versions(env)
    latest = hub.queries.latest_version(env)
    evals = [eval_view(e) for e in EvalResults(hub).list(principal, owner, name)]
    index = f"{base_url(request)}/{env.owner.slug}/simple/"
    return _render(
        request,
        principal,
        "environment.html",
        env=env,
        versions=versions,
        latest=latest,
        readme=render_readme(env.readme, env.readme_content_type or "text/markdown"),
        package=normalize(env.name),
        index=index,
        models=evals_view.by_model(evals),
        chart=evals_view.reward_chart(evals),
    )


@router.get("/{owner}/{name}/source/{version}/", response_class=HTMLResponse)
@router.get("/{owner}/{name}/source/{version}/{path:path}", response_class=HTMLResponse)
def source_page(
    request: Request, owner: str, name: str, version: str, path: str = ""
) -> HTMLResponse:
    hub = hub_of(request)
    principal = web_principal(request)
    env = hub.queries.get_environment(principal, owner, name)
    ver = hub.queries.find_version(env, version)
    archive_file = source_file(ver)
    archive = open_archive(hub.storage, archive_file)
    ctx: dict[str, Any] = {
        "env": env,
        "version": ver,
        "archive": archive_file,
        "entries": archive.entries,
        "path": path,
        "text": None,
        "binary": False,
    }
    if path:
        data = archive.read(path)
        ctx["text"] = as_text(data)
        ctx["binary"] = ctx["text"] is None
        ctx["truncated"] = len(data) > 512 * 1024
    return _render(request, principal, "source.html", **ctx)
