"""Who answers a project name on the simple index: the hub, or the upstream pass-through.

The one rule every index route goes through (global ``/simple/`` and per owner
``/<owner>/simple/``, anonymous or with a token, cached or not):

* A name the hub hosts — any owner, any visibility — is answered by the hub alone and never
  passed upstream. Installers pointed at the hub therefore cannot pick a same-named package
  from another index (dependency confusion), and a private name never reaches the upstream.
* On a per-owner index the owner's own environment answers; a name only another owner hosts
  is answered from that owner's copy (so an environment's hub-hosted dependencies resolve from
  the hub), or refused when several owners host it.
* A hosted name the caller may not read is "not found", exactly like an unknown one on a hub
  without pass-through: no redirect, no detail.
* Only a name the hub does not host (and that is not in ``local_only_names``) is redirected to
  the upstream index's page for it, when a pass-through is configured.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select

from .auth import Principal
from .db.models import Account, Environment
from .errors import BadRequest, Conflict, NotFound
from .names import normalize, validate_project_name
from .service import Hub


@dataclass(frozen=True)
class FromHub:
    owner: str  # whose environment answers


@dataclass(frozen=True)
class Upstream:
    url: str  # the upstream index's project page


def route(hub: Hub, principal: Principal, owner: str | None, name: str) -> FromHub | Upstream:
    """Decide who answers ``name``; raises NotFound or Conflict when nobody may."""
    norm = normalize(name)
    q = (
        select(Environment.name, Environment.visibility, Environment.owner_id, Account.slug)
        .join(Account, Environment.owner_id == Account.id)
        .where(Environment.normalized_name == norm)
    )
    with hub.db.read_engine.connect() as conn:
        rows = conn.execute(q).all()
    missing = f"no environment named {name}" if owner is None else "not found"
    if not rows:
        try:  # only a valid project name goes into a redirect
            validate_project_name(name)
        except BadRequest:
            raise NotFound(missing) from None
        upstream = hub.settings.upstream
        local_only = {normalize(n) for n in hub.settings.local_only_names}
        if upstream is None or norm in local_only:
            raise NotFound(missing)
        return Upstream(f"{upstream}{norm}/")
    readable = [
        r for r in rows if principal.can_read_parts(r.visibility, r.owner_id, r.slug, r.name)
    ]
    if owner is not None and any(r.slug == owner for r in rows):
        # the owner's own name: theirs or nothing (never another owner's, never upstream)
        if any(r.slug == owner for r in readable):
            return FromHub(owner)
        raise NotFound(missing)
    if len(readable) == 1:
        return FromHub(readable[0].slug)
    if readable:
        owners = ", ".join(sorted(f"/{r.slug}/simple/" for r in readable))
        raise Conflict(
            f"several owners publish {name!r}; install from the index of the one you mean: {owners}"
        )
    raise NotFound(missing)  # hosted, but not visible to this caller: never passed upstream
