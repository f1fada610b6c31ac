"""What every service of the hub shares: settings, the database, the blob store, the
upstream-name policy, the clock and the change notification. One object, built once per hub
and handed to each service (`prime_hub.service.Hub` builds them)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from ..db.engine import Database
from ..db.models import Account, Environment, HubState, utcnow
from ..errors import NotFound
from ..name_policy import UpstreamNames
from ..names import normalize
from ..settings import Settings
from ..storage import Storage


@dataclass
class HubContext:
    settings: Settings
    db: Database
    storage: Storage
    upstream_names: UpstreamNames
    clock: Callable[[], dt.datetime] = utcnow
    # called after every committed change a reader could see (this process's caches)
    on_change: list[Callable[[], None]] = field(default_factory=list)

    def changed(self) -> None:
        for cb in self.on_change:
            cb()

    @staticmethod
    def bump(s: Session) -> None:
        """Within a write transaction: tell other processes their caches are stale."""
        s.execute(
            update(HubState).where(HubState.id == 1).values(generation=HubState.generation + 1)
        )

    def generation(self) -> int:
        """The database's change counter (`bump`), read on the connection the database keeps
        for it (`db.counter`: blocking, call it in a worker thread)."""
        return self.db.counter()

    @staticmethod
    def account(s: Session, slug: str, kind: str | None = None) -> Account:
        acct = s.scalar(select(Account).where(Account.slug == slug))
        if acct is None or (kind is not None and acct.kind != kind):
            raise NotFound(f"no {kind or 'account'} named {slug!r}")
        return acct

    @staticmethod
    def env_query(s: Session, owner: str, name: str) -> Environment | None:
        return s.scalar(
            select(Environment)
            .join(Account, Environment.owner_id == Account.id)
            .where(Account.slug == owner, Environment.normalized_name == normalize(name))
        )
