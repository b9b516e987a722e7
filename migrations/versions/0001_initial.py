"""Initial schema: append-only event table, checkpoints, read models, documented views.

Revision ID: 0001_initial
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001_initial"
down_revision = None
branch_labels = None
depends_on = None

_POS = sa.BigInteger().with_variant(sa.Integer, "sqlite")

APPEND_ONLY_MESSAGE = "events are append-only"

SQLITE_TRIGGERS = [
    f"""CREATE TRIGGER events_no_update BEFORE UPDATE ON events
        BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY_MESSAGE}'); END""",
    f"""CREATE TRIGGER events_no_delete BEFORE DELETE ON events
        BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY_MESSAGE}'); END""",
]

POSTGRES_TRIGGERS = [
    f"""CREATE OR REPLACE FUNCTION benchledger_events_append_only() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION '{APPEND_ONLY_MESSAGE}'; END $$""",
    """CREATE TRIGGER events_no_update BEFORE UPDATE ON events
        FOR EACH ROW EXECUTE FUNCTION benchledger_events_append_only()""",
    """CREATE TRIGGER events_no_delete BEFORE DELETE ON events
        FOR EACH ROW EXECUTE FUNCTION benchledger_events_append_only()""",
    """CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
        FOR EACH STATEMENT EXECUTE FUNCTION benchledger_events_append_only()""",
]


def _json(dialect: str, column: str, key: str) -> str:
    if dialect == "sqlite":
        return f"json_extract({column}, '$.{key}')"
    return f"(({column})::jsonb ->> '{key}')"


def _views(dialect: str) -> list[str]:
    """The stable, documented SQL surface (README "Querying the store")."""
    j = _json
    return [
        """CREATE VIEW events_v AS SELECT position, event_id, stream, stream_version, event_type,
           schema_version, recorded_at, correlation_id, idempotency_key, payload, metadata,
           prev_hash, hash FROM events""",
        f"""CREATE VIEW ledger_runs_v AS SELECT ledger_id, run_id, benchmark_id, case_id,
           recorded_at, archived,
           {j(dialect, "row", "arm_id")} AS arm_id,
           {j(dialect, "row", "status")} AS status,
           {j(dialect, "row", "score_status")} AS score_status,
           {j(dialect, "row", "official_score")} AS official_score,
           {j(dialect, "row", "official_passed")} AS official_passed,
           {j(dialect, "row", "failure_class")} AS failure_class,
           {j(dialect, "row", "run_group_id")} AS run_group_id,
           {j(dialect, "row", "job_name")} AS job_name,
           row, position FROM rm_ledger_rows""",
        f"""CREATE VIEW goal_runs_v AS SELECT goal_id, stem, run_key, generated_at,
           {j(dialect, "record", "classification")} AS classification,
           record, position FROM rm_goal_runs""",
        """CREATE VIEW rollout_events_v AS SELECT goal_id, event_id, event_kind, status, record,
           position FROM rm_rollout_events""",
    ]


def upgrade() -> None:
    op.create_table(
        "events",
        sa.Column("position", _POS, primary_key=True, autoincrement=False),
        sa.Column("event_id", sa.String(36), nullable=False, unique=True),
        sa.Column("stream", sa.String(300), nullable=False),
        sa.Column("stream_version", sa.Integer, nullable=False),
        sa.Column("event_type", sa.String(100), nullable=False),
        sa.Column("schema_version", sa.Integer, nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("metadata", sa.Text, nullable=False),
        sa.Column("correlation_id", sa.String(36), nullable=False),
        sa.Column("recorded_at", sa.String(32), nullable=False),
        sa.Column("idempotency_key", sa.String(200), nullable=True, unique=True),
        sa.Column("prev_hash", sa.String(64), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
    )
    op.create_index("ix_events_stream_version", "events", ["stream", "stream_version"], unique=True)
    op.create_index("ix_events_event_type", "events", ["event_type", "position"])
    op.create_index("ix_events_correlation_id", "events", ["correlation_id"])
    op.create_table(
        "projection_checkpoints",
        sa.Column("name", sa.String(100), primary_key=True),
        sa.Column("position", _POS, nullable=False),
    )
    op.create_table(
        "rm_ledgers",
        sa.Column("ledger_id", sa.String(300), primary_key=True),
        sa.Column("ledger_path", sa.Text, nullable=False),
        sa.Column("update_policy", sa.Text, nullable=True),
        sa.Column("created_at", sa.String(32), nullable=False),
        sa.Column("updated_at", sa.String(32), nullable=False),
        sa.Column("position", _POS, nullable=False),
    )
    op.create_table(
        "rm_ledger_rows",
        sa.Column("ledger_id", sa.String(300), primary_key=True),
        sa.Column("run_id", sa.String(200), primary_key=True),
        sa.Column("benchmark_id", sa.String(200), nullable=False),
        sa.Column("case_id", sa.String(300), nullable=False),
        sa.Column("recorded_at", sa.String(40), nullable=False),
        sa.Column("archived", sa.Integer, nullable=False),
        sa.Column("row", sa.Text, nullable=False),
        sa.Column("position", _POS, nullable=False),
    )
    op.create_index(
        "ix_rm_ledger_rows_case", "rm_ledger_rows", ["ledger_id", "benchmark_id", "case_id"]
    )
    op.create_table(
        "rm_goal_runs",
        sa.Column("goal_id", sa.String(200), primary_key=True),
        sa.Column("stem", sa.String(300), primary_key=True),
        sa.Column("run_key", sa.String(300), nullable=True),
        sa.Column("generated_at", sa.String(40), nullable=False),
        sa.Column("record", sa.Text, nullable=False),
        sa.Column("position", _POS, nullable=False),
    )
    op.create_table(
        "rm_global_registry",
        sa.Column("registry_id", sa.String(100), primary_key=True),
        sa.Column("document", sa.Text, nullable=False),
        sa.Column("position", _POS, nullable=False),
    )
    op.create_table(
        "rm_rollout_events",
        sa.Column("goal_id", sa.String(200), primary_key=True),
        sa.Column("event_id", sa.String(200), primary_key=True),
        sa.Column("event_kind", sa.String(100), nullable=False),
        sa.Column("status", sa.String(100), nullable=False),
        sa.Column("record", sa.Text, nullable=False),
        sa.Column("position", _POS, nullable=False),
    )
    op.create_table(
        "rm_exports",
        sa.Column("path", sa.String(500), primary_key=True),
        sa.Column("kind", sa.String(50), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("position", _POS, nullable=False),
    )
    dialect = op.get_bind().dialect.name
    for statement in SQLITE_TRIGGERS if dialect == "sqlite" else POSTGRES_TRIGGERS:
        op.execute(statement)
    for statement in _views(dialect):
        op.execute(statement)


def downgrade() -> None:
    for view in ("rollout_events_v", "goal_runs_v", "ledger_runs_v", "events_v"):
        op.execute(f"DROP VIEW IF EXISTS {view}")
    for table in (
        "rm_exports",
        "rm_rollout_events",
        "rm_global_registry",
        "rm_goal_runs",
        "rm_ledger_rows",
        "rm_ledgers",
        "projection_checkpoints",
        "events",
    ):
        op.drop_table(table)
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS benchledger_events_append_only()")
