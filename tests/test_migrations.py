"""Migrations: the head matches the code, the migrated schema matches the table definitions,
a new store upgrades itself and an out-of-date one is refused with the command to run."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text

import projections.schema  # noqa: F401 - registers read models on the metadata
from ledger.database import SCHEMA_HEAD, alembic_config
from ledger.errors import SchemaOutOfDateError
from ledger.schema import metadata
from tests.support_store import opened


def test_code_head_is_the_alembic_head(db_url):
    s = opened(db_url)
    script = ScriptDirectory.from_config(alembic_config(s.store.engine))
    assert script.get_heads() == [SCHEMA_HEAD]
    s.close()


def test_migrated_schema_matches_the_table_definitions(db_url):
    s = opened(db_url)
    with s.store.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), metadata)
    assert diff == []
    s.close()


def test_new_store_is_upgraded_with_triggers_and_views(db_url):
    s = opened(db_url)
    with s.store.engine.connect() as conn:
        views = set(inspect(conn).get_view_names())
    assert {"events_v", "ledger_runs_v", "goal_runs_v", "rollout_events_v"} <= views
    s.close()


def test_out_of_date_store_is_refused_with_the_upgrade_command(db_url):
    s = opened(db_url)
    with s.store.engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '0000_older'"))
    s.close()
    with pytest.raises(SchemaOutOfDateError, match=r"run `benchledger (--db <URL> )?db upgrade`"):
        opened(db_url)
