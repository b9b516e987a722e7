"""A ledger row is stored once: ``rm_ledger_rows."row"`` may be NULL, meaning "the row of the
single-row event at ``position``" (a ``ledger_upserted`` carries the whole row, so the read
model need not hold a second copy of ~2 KB per run). ``ledger_runs_v`` reads the row from
that event then, so the documented SQL surface is unchanged.

Existing rows keep their text (NULL is only what later writes and replays store).

Revision ID: 0004_ledger_row_once
Revises: 0003_store_integrity
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_ledger_row_once"
down_revision = "0003_store_integrity"
branch_labels = None
depends_on = None

_KEYS = (
    "arm_id",
    "status",
    "score_status",
    "official_score",
    "official_passed",
    "failure_class",
    "run_group_id",
    "job_name",
)


def _view(dialect: str, *, row_once: bool) -> str:
    """``ledger_runs_v`` (as 0001 made it when ``row_once`` is false)."""
    if not row_once:
        row, source = '"row"', "rm_ledger_rows"
    else:
        payload_row = (
            "json_extract(e.payload, '$.row')"
            if dialect == "sqlite"
            else "((e.payload)::json -> 'row')::text"
        )
        row = f'coalesce(r."row", {payload_row})'
        source = (
            'rm_ledger_rows r LEFT JOIN events e ON r."row" IS NULL AND e.position = r.position'
        )
    if dialect == "sqlite":
        fields = [f"json_extract({row}, '$.{key}') AS {key}" for key in _KEYS]
    else:
        fields = [f"(({row})::jsonb ->> '{key}') AS {key}" for key in _KEYS]
    prefix = "r." if row_once else ""
    head = ", ".join(
        f"{prefix}{c}"
        for c in ("ledger_id", "run_id", "benchmark_id", "case_id", "recorded_at", "archived")
    )
    return (
        f"{head},\n           {', '.join(fields)},\n"
        f'           {row} AS "row", {prefix}position FROM {source}'
    )


def _replace_view(dialect: str, *, row_once: bool) -> None:
    body = _view(dialect, row_once=row_once)
    if dialect == "sqlite":
        op.execute("DROP VIEW IF EXISTS ledger_runs_v")
        op.execute(f"CREATE VIEW ledger_runs_v AS SELECT {body}")
    else:  # keeps the reader role's grant on the view
        op.execute(f"CREATE OR REPLACE VIEW ledger_runs_v AS SELECT {body}")


# The table's indexes, made again in this order after SQLite copies the table.
_INDEXES = (
    ("ix_rm_ledger_rows_case", ["ledger_id", "benchmark_id", "case_id"]),
    ("ix_rm_ledger_rows_render", ["ledger_id", "render_key"]),
)


def _copy_sqlite_table(*, nullable: bool) -> None:
    """SQLite cannot change NOT NULL in place: the table is copied, without the view on it
    and without its indexes (made again afterwards, in a fixed order)."""
    op.execute("DROP VIEW IF EXISTS ledger_runs_v")
    for name, _columns in _INDEXES:
        op.drop_index(name, table_name="rm_ledger_rows")
    with op.batch_alter_table("rm_ledger_rows", recreate="always") as batch:
        batch.alter_column("row", existing_type=sa.Text, nullable=nullable)
    for name, columns in _INDEXES:
        op.create_index(name, "rm_ledger_rows", columns)


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        _copy_sqlite_table(nullable=True)
    else:
        op.alter_column("rm_ledger_rows", "row", existing_type=sa.Text, nullable=True)
    _replace_view(dialect, row_once=True)


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    # Rows kept only in their events get their text back before the column refuses NULL.
    extract = (
        "json_extract(e.payload, '$.row')"
        if dialect == "sqlite"
        else "((e.payload)::json -> 'row')::text"
    )
    op.execute(
        f'UPDATE rm_ledger_rows SET "row" = (SELECT {extract} FROM events e'
        ' WHERE e.position = rm_ledger_rows.position) WHERE "row" IS NULL'
    )
    if dialect == "sqlite":
        _copy_sqlite_table(nullable=False)
    else:
        op.alter_column("rm_ledger_rows", "row", existing_type=sa.Text, nullable=False)
    _replace_view(dialect, row_once=False)
