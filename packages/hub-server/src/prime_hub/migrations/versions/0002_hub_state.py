"""A generation counter for cross-process cache validation.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    table = op.create_table(
        "hub_state",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("generation", sa.BigInteger, nullable=False),
    )
    op.bulk_insert(table, [{"id": 1, "generation": 0}])


def downgrade() -> None:
    op.drop_table("hub_state")
