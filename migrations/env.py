"""Alembic environment: runs against the engine benchledger hands over, never a URL in a file."""

from __future__ import annotations

from alembic import context

import benchledger.projections.read_models.schema  # noqa: F401 - registers the read-model tables on the metadata
from benchledger.ledger.store.schema import metadata

target_metadata = metadata


def run_migrations_online() -> None:
    engine = context.config.attributes.get("engine")
    if engine is None:
        from sqlalchemy import create_engine

        url = context.config.get_main_option("sqlalchemy.url")
        if url is None:
            raise SystemExit("benchledger migrations need an engine or a sqlalchemy.url")
        engine = create_engine(url)
    with engine.begin() as connection:
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=connection.dialect.name == "sqlite",
        )
        context.run_migrations()


if context.is_offline_mode():
    raise SystemExit("benchledger migrations run online only")
run_migrations_online()
