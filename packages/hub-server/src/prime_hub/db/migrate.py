"""Run the Alembic migrations to head (safe to call from several processes at once)."""

from __future__ import annotations

from importlib import resources

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, text

_PG_LOCK_ID = 0x5052_494D  # arbitrary constant: "PRIM"


def alembic_config(connection: object) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(resources.files("prime_hub") / "migrations"))
    cfg.attributes["connection"] = connection
    return cfg


def upgrade(engine: Engine, revision: str = "head") -> None:
    with engine.connect() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": _PG_LOCK_ID})
            conn.commit()
        try:
            command.upgrade(alembic_config(conn), revision)
            conn.commit()
        finally:
            if conn.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": _PG_LOCK_ID})
                conn.commit()
