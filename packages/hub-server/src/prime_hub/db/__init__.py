"""Database layer: models, engine/session factory, migrations."""
