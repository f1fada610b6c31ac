"""The registry's operations, independent of HTTP: accounts, tokens, publishing, queries.

``Hub`` joins the parts in ``prime_hub.core`` (one module per concern); this module keeps the
import path every caller uses.
"""

from __future__ import annotations

from .core.accounts import AccountsMixin
from .core.base import HubBase, _latest_of
from .core.cleanup import CleanupMixin
from .core.management import ManagementMixin
from .core.publishing import PublishingMixin, PublishResult
from .core.queries import DownloadInfo, IndexData, QueriesMixin


class Hub(AccountsMixin, ManagementMixin, QueriesMixin, PublishingMixin, CleanupMixin, HubBase):
    """Every registry operation; see the mixins for each concern."""


__all__ = ["DownloadInfo", "Hub", "IndexData", "PublishResult", "_latest_of"]
