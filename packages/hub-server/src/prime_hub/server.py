"""Entry point for uvicorn workers: ``uvicorn prime_hub.server:app --factory``."""

from __future__ import annotations

from .app import build_hub, create_asgi
from .fastpath import IndexFastPath
from .settings import Settings


def app() -> IndexFastPath:
    settings = Settings()
    return create_asgi(settings, build_hub(settings, migrate=False))
