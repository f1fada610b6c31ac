"""Column builders the migration files share.

Frozen with the migrations: a revision must build the same schema forever, so nothing here
may change what an existing call returns (add a new function instead), and nothing here
imports the app's models or settings, which do change."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa


def timestamp(name: str, nullable: bool = False) -> sa.Column[datetime]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def reference(name: str, target: str, ondelete: str = "CASCADE", **kw: Any) -> sa.Column[int]:
    """An integer foreign key to ``target`` ("table.id"); ``kw`` goes to ``sa.Column``."""
    return sa.Column(name, sa.Integer, sa.ForeignKey(target, ondelete=ondelete), **kw)
