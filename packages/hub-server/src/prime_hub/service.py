"""The registry: its shared context and one service per concern (``prime_hub.core``).

``Hub`` builds the `HubContext` (settings, database, store, clock, change notification) and
the services that hold it; routes and other callers use the service they need
(``hub.queries.get_environment(...)``, ``deps.queries(request)``). The context's parts stay
reachable as ``hub.settings``, ``hub.db``, ``hub.storage``, ``hub.on_change``.
"""

from __future__ import annotations

from .core.accounts import AccountsService
from .core.cleanup import CleanupService
from .core.context import HubContext
from .core.latest import _latest_of
from .core.management import ManagementService
from .core.publishing import PublishingService, PublishResult
from .core.queries import DownloadInfo, IndexData, QueryService
from .core.staging import StagingService
from .counters import DownloadCounter
from .db.engine import Database
from .name_policy import UpstreamNames
from .settings import Settings
from .storage import Storage


class Hub:
    """Every registry operation, one service per concern, over one shared context."""

    def __init__(self, settings: Settings, db: Database, storage: Storage) -> None:
        self.ctx = HubContext(settings, db, storage, UpstreamNames(settings))
        self.accounts = AccountsService(self.ctx)
        self.queries = QueryService(self.ctx)
        self.management = ManagementService(self.ctx, self.queries)
        self.publishing = PublishingService(self.ctx)
        self.staging = StagingService(self.ctx)
        self.cleanup = CleanupService(self.ctx, self.staging)
        self.downloads = DownloadCounter(self.queries.record_downloads)
        # the context's parts, for callers that need one of them rather than a service
        self.settings, self.db, self.storage = settings, db, storage
        self.on_change = self.ctx.on_change
        self.generation = self.ctx.generation


__all__ = [
    "DownloadInfo",
    "Hub",
    "HubContext",
    "IndexData",
    "PublishResult",
    "_latest_of",
]
