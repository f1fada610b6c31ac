"""Listings rebuilt without the framework: the cold path of the listing cache.

A listing's answer (the JSON API's and the CLI's environment lists, the home and owner pages)
is a function of the hub's contents, the viewer, the public URL and its query parameters. Each
listing is written once, as a plain function of those that declares its query parameters as
FastAPI does (`listing_route`). Its FastAPI route validates the parameters, calls it, and
marks its path with the listing (`LeanListing.answer`); from then on, when
`listing_cache.ListingCache` must rebuild that path's response after a change, it calls the
listing directly (`LeanListing.lean`), skipping routing, dependency resolution, the
validation of ten parameters and a thread hop, which cost as much as a small listing's SQL.

The lean path takes only what it parses exactly as FastAPI would: the parameters come from
the declaration FastAPI validates (types, defaults, ``ge``/``le`` bounds), a value FastAPI might read
differently (an integer with a sign or spaces, a boolean spelt otherwise than ``true``,
``false``, ``1`` or ``0``, a scalar given twice) or out of bounds, and any error the listing
raises, hand the request back to the framework, which answers it as it always did. Both
paths build the same `Response` object, and the cache sends the lean one through the same
header middleware, so the bytes on the wire are the same (`test_lean_listings` compares them).
"""

from __future__ import annotations

import inspect
import logging
import typing
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any
from urllib.parse import parse_qsl

from fastapi import Request
from pydantic.fields import FieldInfo
from starlette.responses import Response

from .auth import Principal
from .errors import HubError
from .listing_cache import mark_cacheable
from .service import Hub

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]


def public_base(hub: Hub, scope: Scope) -> str:
    """The hub's public URL as a request sees it: the configured one, else the request's
    scheme, Host and root path (what ``Request.base_url`` gives), without a trailing slash."""
    if hub.settings.base_url:
        return hub.settings.base_url.rstrip("/")
    host = next((v for k, v in scope.get("headers", ()) if k == b"host"), None)
    root = scope.get("app_root_path", scope.get("root_path", ""))
    server = scope.get("server")  # a list in some servers' scopes: hashable here
    return _base_of(scope.get("scheme", "http"), host, server and tuple(server), root)


@lru_cache(maxsize=256)
def _base_of(scheme: str, host: bytes | None, server: Any, root: str) -> str:
    """``Request.base_url`` of a scope with these parts (all it reads), once per parts."""
    headers = [] if host is None else [(b"host", host)]
    scope = {"type": "http", "scheme": scheme, "server": server, "root_path": root}
    return str(Request({**scope, "headers": headers}).base_url).rstrip("/")


@dataclass(frozen=True)
class Viewer:
    """Who a listing is built for, and where: the principal, the hub's public URL, and the
    web session's token ("" without a session cookie; pages derive their CSRF value from it)."""

    principal: Principal
    base: str
    session_token: str = ""


@dataclass(frozen=True)
class _Param:
    name: str
    kind: str  # "str", "int", "bool" or "list"
    default: Any
    ge: int | None = None
    le: int | None = None


_BOOLS = {"true": True, "false": False, "1": True, "0": False}


def _params_of(build: Callable[..., Any]) -> tuple[_Param, ...]:
    """The query parameters a listing declares (its keyword-only parameters), read once."""
    hints = typing.get_type_hints(build)
    out = []
    for p in inspect.signature(build).parameters.values():
        if p.kind is not inspect.Parameter.KEYWORD_ONLY:
            continue  # the hub, the viewer, the path's values
        default, ge, le = p.default, None, None
        if isinstance(default, FieldInfo):
            for m in default.metadata:  # pydantic's constraints (annotated-types' Ge, Le)
                bound: Any = getattr(m, "ge", None)
                if bound is not None:
                    ge = int(bound)
                bound = getattr(m, "le", None)
                if bound is not None:
                    le = int(bound)
            default = default.default
        hint = hints[p.name]
        if hint in (str, str | None):
            kind = "str"
        elif hint is int:
            kind = "int"
        elif hint is bool:
            kind = "bool"
        elif hint == list[str]:
            kind = "list"
        else:
            raise TypeError(f"{build.__name__}: no lean parsing for {p.name}: {hint}")
        out.append(_Param(p.name, kind, default, ge, le))
    return tuple(out)


def parse_query(params: tuple[_Param, ...], query: bytes) -> dict[str, Any] | None:
    """``params``' values in ``query`` as FastAPI would pass them, or None where the lean
    path must not guess (see the module's docstring). Unknown parameters are ignored, as
    FastAPI ignores them."""
    given: dict[str, list[str]] = {}
    if query:
        wanted = {p.name for p in params}
        # Starlette's QueryParams: the bytes read as latin-1, then parse_qsl (UTF-8 escapes)
        for k, v in parse_qsl(query.decode("latin-1"), keep_blank_values=True):
            if k in wanted:
                given.setdefault(k, []).append(v)
    out: dict[str, Any] = {}
    for p in params:
        values = given.get(p.name)
        if values is None:
            out[p.name] = list(p.default) if p.kind == "list" else p.default
        elif p.kind == "list":
            out[p.name] = values
        elif len(values) != 1:
            return None
        elif p.kind == "str":
            out[p.name] = values[0]
        elif p.kind == "bool":
            flag = _BOOLS.get(values[0])
            if flag is None:
                return None
            out[p.name] = flag
        else:
            text = values[0]
            if not (text.isascii() and text.isdigit() and len(text) <= 9):
                return None
            n = int(text)
            if (p.ge is not None and n < p.ge) or (p.le is not None and n > p.le):
                return None
            out[p.name] = n
    return out


class LeanListing:
    """One listing: ``build(hub, viewer, *path_values, **query_values) -> Response``, its
    query parameters declared as FastAPI's (keyword-only, with their types and defaults,
    ``Query(...)`` for bounds); `listing_route` makes its route."""

    def __init__(self, build: Callable[..., Response]) -> None:
        self.build = build
        self.params = _params_of(build)

    def answer(
        self, request: Request, hub: Hub, viewer: Viewer, *path_values: Any, **values: Any
    ) -> Response:
        """The route's answer (parameters validated by FastAPI); marks the path so that the
        listing cache rebuilds it with `lean` from now on."""
        response = self.build(hub, viewer, *path_values, **values)
        mark_cacheable(request, lean=partial(self.lean, hub, path_values))  # a listing found
        return response

    def lean(
        self, hub: Hub, path_values: tuple[Any, ...], principal: Principal, scope: Scope
    ) -> Response | None:
        """The listing for a request the cache may answer (no session cookie; ``principal``
        authenticated by the cache), or None: let the framework answer it. Blocking."""
        values = parse_query(self.params, scope.get("query_string", b""))
        if values is None:
            return None
        try:
            return self.build(
                hub, Viewer(principal, public_base(hub, scope)), *path_values, **values
            )
        except HubError:  # a 404, a 401: the framework answers it, as a page or JSON
            return None
        except Exception:  # a fault of this path: the framework's answer stands, logged
            log.warning("lean listing of %s handed back", scope.get("path"), exc_info=True)
            return None


RouteDecorator = Callable[[Callable[..., Any]], Any]


def listing_route(
    *routes: RouteDecorator, viewer: Callable[[Request], Viewer], path: tuple[str, ...] = ()
) -> Callable[[Callable[..., Response]], LeanListing]:
    """Declares a listing and its FastAPI routes (``routes``: ``router.get(...)`` calls) at
    once: the endpoint's signature is the listing's own, ``request`` in place of the hub and
    the viewer (``viewer`` makes it from the request), so FastAPI validates the parameters
    the listing declares and the lean path parses the same declaration. ``path``: the names
    of the listing's positional parameters after the viewer, the route's path parameters."""

    def register(build: Callable[..., Response]) -> LeanListing:
        listing = LeanListing(build)
        hints = typing.get_type_hints(build)
        declared = list(inspect.signature(build).parameters.values())[2:]
        if [p.name for p in declared if p.kind is not inspect.Parameter.KEYWORD_ONLY] != list(path):
            raise TypeError(f"{build.__name__}: positional parameters must be {path}")

        def endpoint(request: Request, **values: Any) -> Response:
            path_values = [values.pop(name) for name in path]
            return listing.answer(
                request, request.app.state.hub, viewer(request), *path_values, **values
            )

        request_param = inspect.Parameter(
            "request", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Request
        )
        endpoint.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [
                request_param,
                *(
                    p.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=hints[p.name])
                    for p in declared
                ),
            ],
            return_annotation=Response,
        )
        endpoint.__name__ = build.__name__.lstrip("_")
        endpoint.__doc__ = build.__doc__
        for route in routes:
            route(endpoint)
        return listing

    return register
