"""Entry point for uvicorn workers: ``uvicorn prime_hub.server:app --factory``."""

from __future__ import annotations

from fastapi import FastAPI

from .app import build_hub, create_app
from .settings import Settings


def app() -> FastAPI:
    settings = Settings()
    return create_app(settings, build_hub(settings, migrate=False))
