"""Each environment's latest version as a stored pointer (issue 30): listings read it instead
of parsing every version string; publish, yank, unyank and delete keep it (`core.latest`).
The backfill applies the same rule to the versions already published.

Revision ID: 0006
Revises: 0005
"""

from typing import Any

import sqlalchemy as sa
from alembic import op
from packaging.version import InvalidVersion
from packaging.version import Version as PkgVersion

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def _latest(rows: list[Any]) -> int | None:
    """`core.latest._latest_of` with pre-releases counted, restated here: a migration must
    keep doing what it did when it was written, whatever the code later becomes."""
    live = []
    for r in rows:
        if r.yanked:
            continue
        try:
            live.append((PkgVersion(r.version), r.id))
        except InvalidVersion:  # the hub never stored one; skip rather than fail the upgrade
            continue
    live.sort(key=lambda p: p[0], reverse=True)  # stable: equal versions keep id order
    finals = [p for p in live if not p[0].is_prerelease]
    pool = finals or live
    return pool[0][1] if pool else None


def upgrade() -> None:
    op.add_column("environments", sa.Column("latest_version_id", sa.Integer, nullable=True))
    conn = op.get_bind()
    versions = sa.table(
        "versions",
        sa.column("id", sa.Integer),
        sa.column("environment_id", sa.Integer),
        sa.column("version", sa.String),
        sa.column("yanked", sa.Boolean),
    )
    environments = sa.table(
        "environments", sa.column("id", sa.Integer), sa.column("latest_version_id", sa.Integer)
    )
    by_env: dict[int, list[Any]] = {}
    for r in conn.execute(
        sa.select(
            versions.c.id, versions.c.environment_id, versions.c.version, versions.c.yanked
        ).order_by(versions.c.id)
    ):
        by_env.setdefault(r.environment_id, []).append(r)
    updates = [
        {"env_id": env_id, "latest": latest}
        for env_id, rows in by_env.items()
        if (latest := _latest(rows)) is not None
    ]
    if updates:
        conn.execute(
            environments.update()
            .where(environments.c.id == sa.bindparam("env_id"))
            .values(latest_version_id=sa.bindparam("latest")),
            updates,
        )


def downgrade() -> None:
    with op.batch_alter_table("environments") as batch:  # SQLite drops columns by copying
        batch.drop_column("latest_version_id")
