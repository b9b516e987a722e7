"""Rendered pieces of the ledger read model: per-row render key, JSON fragment and Markdown
line on ``rm_ledger_rows``, and the per-case table ``rm_ledger_cases``, so a render streams
stored bytes instead of re-dumping the whole ledger.

Existing rows are filled in here from their stored ``row`` text with the same functions the
projection uses, so an upgraded store renders and verifies exactly like a replayed one.

Revision ID: 0002_ledger_render_cache
Revises: 0001_initial
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002_ledger_render_cache"
down_revision = "0001_initial"
branch_labels = None
depends_on = None

_POS = sa.BigInteger().with_variant(sa.Integer, "sqlite")


def upgrade() -> None:
    # Plain ADD COLUMN (no batch copy): SQLite cannot rebuild a table a view depends on.
    op.add_column("rm_ledger_rows", sa.Column("render_key", sa.LargeBinary, nullable=True))
    op.add_column("rm_ledger_rows", sa.Column("json_fragment", sa.LargeBinary, nullable=True))
    op.add_column("rm_ledger_rows", sa.Column("markdown_line", sa.Text, nullable=True))
    op.create_index("ix_rm_ledger_rows_render", "rm_ledger_rows", ["ledger_id", "render_key"])
    op.create_table(
        "rm_ledger_cases",
        sa.Column("ledger_id", sa.String(300), primary_key=True),
        sa.Column("benchmark_id", sa.String(200), primary_key=True),
        sa.Column("case_id", sa.String(300), primary_key=True),
        sa.Column("active_run_count", sa.Integer, nullable=False),
        sa.Column("archived_run_count", sa.Integer, nullable=False),
        sa.Column("json_head", sa.LargeBinary, nullable=False),
        sa.Column("decision_line", sa.Text, nullable=True),
        sa.Column("backlog", sa.Text, nullable=True),
        sa.Column("position", _POS, nullable=False),
    )
    _backfill(op.get_bind())


def _backfill(conn: sa.engine.Connection) -> None:
    """Fill the new columns of every stored row, then decide every case of every ledger."""
    from ledger.db_sqlalchemy import SqlAlchemyConnection
    from projections.ledger_cases import rebuild_ledger_cases
    from projections.ledger_fragments import run_columns

    rows = sa.table(
        "rm_ledger_rows",
        sa.column("ledger_id"),
        sa.column("run_id"),
        sa.column("row"),
        sa.column("render_key", sa.LargeBinary),
        sa.column("json_fragment", sa.LargeBinary),
        sa.column("markdown_line"),
    )
    update = (
        rows.update()
        .where(rows.c.ledger_id == sa.bindparam("k_ledger"), rows.c.run_id == sa.bindparam("k_run"))
        .values(
            render_key=sa.bindparam("render_key"),
            json_fragment=sa.bindparam("json_fragment"),
            markdown_line=sa.bindparam("markdown_line"),
        )
    )
    found = conn.execute(sa.select(rows.c.ledger_id, rows.c.run_id, rows.c.row)).all()
    for start in range(0, len(found), 1000):
        params = [
            {"k_ledger": ledger_id, "k_run": run_id, **run_columns(text)}
            for ledger_id, run_id, text in found[start : start + 1000]
        ]
        conn.execute(update, params)
    for ledger_id in sorted({ledger_id for ledger_id, _run, _text in found}):
        rebuild_ledger_cases(SqlAlchemyConnection(conn), ledger_id)


def downgrade() -> None:
    op.drop_table("rm_ledger_cases")
    op.drop_index("ix_rm_ledger_rows_render", table_name="rm_ledger_rows")
    for column in ("markdown_line", "json_fragment", "render_key"):
        op.execute(f"ALTER TABLE rm_ledger_rows DROP COLUMN {column}")  # SQLite >= 3.35
