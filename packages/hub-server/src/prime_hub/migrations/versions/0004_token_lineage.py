"""Which token minted a token, so that revoking a token revokes the tokens minted from it.

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("api_tokens", sa.Column("minted_by_id", sa.Integer, nullable=True))
    op.create_index("ix_api_tokens_minted_by_id", "api_tokens", ["minted_by_id"])


def downgrade() -> None:
    op.drop_index("ix_api_tokens_minted_by_id", table_name="api_tokens")
    op.drop_column("api_tokens", "minted_by_id")
