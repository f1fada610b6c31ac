"""Evaluation results pushed with ``prime eval --push``.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

from prime_hub.migrations.columns import reference, timestamp

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "eval_results",
        sa.Column("id", sa.Integer, primary_key=True),
        reference("environment_id", "environments.id", nullable=False),
        reference("version_id", "versions.id", nullable=False),
        reference("submitter_id", "accounts.id", "SET NULL", nullable=True),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("reward_mean", sa.Float, nullable=True),
        sa.Column("reward_std", sa.Float, nullable=True),
        sa.Column("num_examples", sa.Integer, nullable=False),
        sa.Column("rollouts_per_example", sa.Integer, nullable=False),
        sa.Column("num_rollouts", sa.Integer, nullable=False),
        sa.Column("num_errors", sa.Integer, nullable=False),
        sa.Column("details", sa.JSON, nullable=False),
        timestamp("created_at"),
    )
    op.create_index("ix_eval_results_environment_id", "eval_results", ["environment_id"])
    op.create_index("ix_eval_results_version_id", "eval_results", ["version_id"])
    op.create_index("ix_eval_results_model", "eval_results", ["model"])


def downgrade() -> None:
    op.drop_table("eval_results")
