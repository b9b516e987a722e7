"""Migrations: the head matches the code, the migrated schema matches the table definitions,
a new SQLite store made from the head snapshot equals one the revisions build, a new store
upgrades itself and an out-of-date one is refused with the command to run."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect

import benchledger.projections.read_models.schema  # noqa: F401 - registers read models on the metadata
from benchledger.ledger.core.errors import SchemaOutOfDateError
from benchledger.ledger.store import schema as ledger_schema
from benchledger.ledger.store import tables as ledger_tables
from benchledger.ledger.store.database import SCHEMA_HEAD, alembic_config
from benchledger.ledger.store.schema import metadata
from benchledger.migrations import sqlite_head
from benchledger.migrations.snapshot import head_schema, render, schema_of
from benchledger.projections.read_models import schema as rm_schema
from benchledger.projections.read_models import tables as rm_tables
from tests.support_store import opened

SPECS = [
    (ledger_schema.events, ledger_tables.EVENTS),
    (ledger_schema.projection_checkpoints, ledger_tables.PROJECTION_CHECKPOINTS),
    (rm_schema.ledgers, rm_tables.LEDGERS),
    (rm_schema.ledger_rows, rm_tables.LEDGER_ROWS),
    (rm_schema.ledger_cases, rm_tables.LEDGER_CASES),
    (rm_schema.compare_facts, rm_tables.COMPARE_FACTS),
    (rm_schema.aggregate_facts, rm_tables.AGGREGATE_FACTS),
    (rm_schema.aggregate_cases, rm_tables.AGGREGATE_CASES),
    (rm_schema.goal_runs, rm_tables.GOAL_RUNS),
    (rm_schema.global_registry, rm_tables.GLOBAL_REGISTRY),
    (rm_schema.rollout_events, rm_tables.ROLLOUT_EVENTS),
    (rm_schema.exports, rm_tables.EXPORTS),
]


def test_code_head_is_the_alembic_head(db_url):
    s = opened(db_url)
    script = ScriptDirectory.from_config(alembic_config(s.store.database))
    assert script.get_heads() == [SCHEMA_HEAD]
    s.close()


def test_migrated_schema_matches_the_table_definitions(db_url):
    """On SQLite the store was made from the head snapshot, so this checks the snapshot too."""
    s = opened(db_url)
    engine = s.store.database.sqlalchemy_engine()
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), metadata)
    assert diff == []
    s.close()


def test_sqlite_head_snapshot_is_what_the_revisions_build(tmp_path):
    """``python -m migrations.snapshot`` is up to date: same revision, same statements in the
    same order, and a store made from it has exactly the same schema."""
    revision, statements = head_schema(tmp_path / "alembic.db")
    assert revision == sqlite_head.REVISION == SCHEMA_HEAD
    assert list(sqlite_head.STATEMENTS) == statements
    assert render(revision, statements) == open(sqlite_head.__file__, encoding="utf-8").read()
    s = opened(f"sqlite:///{tmp_path / 'snapshot.db'}")
    s.close()
    assert schema_of(tmp_path / "snapshot.db") == (revision, statements)


@pytest.mark.parametrize(("model", "spec"), SPECS, ids=[spec.name for _m, spec in SPECS])
def test_table_specs_match_the_models(model, spec):
    assert spec.name == model.name
    assert spec.columns == tuple(c.name for c in model.columns)
    assert spec.primary_key == tuple(c.name for c in model.primary_key.columns)


def test_every_model_has_a_spec():
    assert {m.name for m, _spec in SPECS} == set(metadata.tables)


def test_new_store_is_upgraded_with_triggers_and_views(db_url):
    s = opened(db_url)
    engine = s.store.database.sqlalchemy_engine()
    with engine.connect() as conn:
        views = set(inspect(conn).get_view_names())
    assert {"events_v", "ledger_runs_v", "goal_runs_v", "rollout_events_v"} <= views
    s.close()


def test_out_of_date_store_is_refused_with_the_upgrade_command(db_url):
    s = opened(db_url)
    with s.store.database.begin() as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0000_older'")
    s.close()
    with pytest.raises(SchemaOutOfDateError, match=r"run `benchledger (--db \S+ )?db upgrade`"):
        opened(db_url)
