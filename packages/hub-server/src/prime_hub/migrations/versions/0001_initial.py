"""Initial schema: accounts, memberships, tokens, environments, versions, files.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

from prime_hub.migrations.columns import reference, timestamp

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "accounts",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("slug", sa.String(40), nullable=False, unique=True),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("display_name", sa.String(200), nullable=False),
        sa.Column("email", sa.String(320), nullable=True),
        sa.Column("is_admin", sa.Boolean, nullable=False),
        timestamp("created_at"),
    )
    op.create_table(
        "memberships",
        reference("org_id", "accounts.id", primary_key=True),
        reference("user_id", "accounts.id", primary_key=True),
        sa.Column("role", sa.String(16), nullable=False),
    )
    op.create_table(
        "api_tokens",
        sa.Column("id", sa.Integer, primary_key=True),
        reference("user_id", "accounts.id", nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("scope", sa.String(16), nullable=False),
        sa.Column("environment", sa.String(200), nullable=True),
        timestamp("created_at"),
        timestamp("expires_at", True),
        timestamp("revoked_at", True),
    )
    op.create_table(
        "environments",
        sa.Column("id", sa.Integer, primary_key=True),
        reference("owner_id", "accounts.id", nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("normalized_name", sa.String(100), nullable=False),
        sa.Column("description", sa.Text, nullable=False),
        sa.Column("readme", sa.Text, nullable=False),
        sa.Column("readme_content_type", sa.String(100), nullable=False),
        sa.Column("visibility", sa.String(8), nullable=False),
        sa.Column("downloads", sa.BigInteger, nullable=False),
        timestamp("created_at"),
        timestamp("updated_at"),
        sa.UniqueConstraint("owner_id", "normalized_name"),
    )
    op.create_index("ix_environments_normalized_name", "environments", ["normalized_name"])
    op.create_table(
        "environment_tags",
        reference("environment_id", "environments.id", primary_key=True),
        sa.Column("tag", sa.String(50), primary_key=True),
    )
    op.create_index("ix_environment_tags_tag", "environment_tags", ["tag"])
    op.create_table(
        "versions",
        sa.Column("id", sa.Integer, primary_key=True),
        reference("environment_id", "environments.id", nullable=False),
        sa.Column("version", sa.String(100), nullable=False),
        sa.Column("canonical_version", sa.String(100), nullable=False),
        sa.Column("summary", sa.Text, nullable=False),
        sa.Column("requires_python", sa.String(200), nullable=True),
        sa.Column("dependencies", sa.JSON, nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=True),
        reference("uploader_id", "accounts.id", "SET NULL", nullable=True),
        timestamp("created_at"),
        sa.Column("yanked", sa.Boolean, nullable=False),
        sa.Column("yanked_reason", sa.Text, nullable=False),
        sa.UniqueConstraint("environment_id", "canonical_version"),
    )
    op.create_index("ix_versions_environment_id", "versions", ["environment_id"])
    op.create_table(
        "files",
        sa.Column("id", sa.Integer, primary_key=True),
        reference("version_id", "versions.id", nullable=False),
        reference("environment_id", "environments.id", nullable=False),
        sa.Column("filename", sa.String(300), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("size", sa.BigInteger, nullable=False),
        sa.Column("storage_key", sa.String(400), nullable=False),
        sa.Column("requires_python", sa.String(200), nullable=True),
        sa.Column("core_metadata", sa.LargeBinary, nullable=True),
        sa.Column("metadata_sha256", sa.String(64), nullable=True),
        timestamp("uploaded_at"),
        reference("uploader_id", "accounts.id", "SET NULL", nullable=True),
        sa.Column("downloads", sa.BigInteger, nullable=False),
        sa.UniqueConstraint("environment_id", "filename"),
    )
    op.create_index("ix_files_version_id", "files", ["version_id"])
    op.create_table(
        "used_filenames",
        reference("owner_id", "accounts.id", primary_key=True),
        sa.Column("filename", sa.String(300), primary_key=True),
        sa.Column("sha256", sa.String(64), nullable=False),
        timestamp("created_at"),
    )
    op.create_table(
        "pending_uploads",
        sa.Column("id", sa.String(64), primary_key=True),
        reference("environment_id", "environments.id", nullable=False),
        reference("user_id", "accounts.id", nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("filename", sa.String(300), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("size", sa.BigInteger, nullable=True),
        sa.Column("version", sa.String(100), nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=True),
        sa.Column("extra", sa.JSON, nullable=False),
        sa.Column("staging_key", sa.String(400), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        timestamp("created_at"),
    )
    op.create_index("ix_pending_uploads_environment_id", "pending_uploads", ["environment_id"])


def downgrade() -> None:
    for table in (
        "pending_uploads",
        "used_filenames",
        "files",
        "versions",
        "environment_tags",
        "environments",
        "api_tokens",
        "memberships",
        "accounts",
    ):
        op.drop_table(table)
