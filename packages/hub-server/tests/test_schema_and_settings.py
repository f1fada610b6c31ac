"""Migrations produce exactly the models' schema (SQLite and PostgreSQL); settings sources."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, inspect

from prime_hub.db.migrate import upgrade
from prime_hub.db.models import Base
from prime_hub.settings import Settings


def _diff(engine) -> list:
    with engine.connect() as conn:
        ctx = MigrationContext.configure(conn, opts={"compare_type": True})
        return compare_metadata(ctx, Base.metadata)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_migrations_match_models(backend, database_url):
    engine = create_engine(database_url(backend, "prime_hub_migrations"))
    upgrade(engine)
    upgrade(engine)  # idempotent
    assert _diff(engine) == []
    assert "alembic_version" in inspect(engine).get_table_names()
    from alembic import command

    from prime_hub.db.migrate import alembic_config

    with engine.connect() as conn:
        command.downgrade(alembic_config(conn), "base")
        conn.commit()
    assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
    engine.dispose()


def test_settings_from_env_and_config_file(tmp_path, monkeypatch):
    cfg = tmp_path / "hub.toml"
    cfg.write_text('storage = "s3"\ns3_bucket = "from-file"\nport = 9000\n')
    monkeypatch.setenv("PRIME_HUB_CONFIG", str(cfg))
    monkeypatch.setenv("PRIME_HUB_PORT", "9100")
    monkeypatch.setenv("PRIME_HUB_DATA_DIR", str(tmp_path / "d"))
    s = Settings()
    assert s.storage == "s3" and s.s3_bucket == "from-file"
    assert s.port == 9100  # the environment wins over the file
    assert s.resolved_database_url == f"sqlite:///{(tmp_path / 'd' / 'hub.db').resolve()}"
    assert s.resolved_artifact_dir == (tmp_path / "d" / "artifacts").resolve()


def test_admin_cli(tmp_path, monkeypatch, capsys):
    from prime_hub.cli import main

    monkeypatch.setenv("PRIME_HUB_DATA_DIR", str(tmp_path))
    assert main(["admin", "create-user", "root-user", "--admin"]) == 0
    assert main(["admin", "create-user", "root-user"]) == 1  # taken
    assert main(["admin", "create-org", "lab", "--owner", "root-user"]) == 0
    assert main(["admin", "create-user", "member"]) == 0
    assert main(["admin", "set-member", "lab", "member", "--role", "reader"]) == 0
    capsys.readouterr()
    assert (
        main(
            ["admin", "create-token", "root-user", "--scope", "read", "--environment", "lab/My_Env"]
        )
        == 0
    )
    token = capsys.readouterr().out.strip()
    assert token.startswith("phub_")
    assert main(["admin", "list-tokens", "root-user"]) == 0
    listing = capsys.readouterr().out
    assert "lab/my-env" in listing and "active" in listing
    assert main(["admin", "revoke-token", listing.split()[0]]) == 0
    assert main(["admin", "list-tokens", "root-user"]) == 0
    assert "revoked" in capsys.readouterr().out
    assert main(["admin", "create-user", "Bad Name"]) == 1
