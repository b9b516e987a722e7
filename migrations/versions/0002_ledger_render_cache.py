"""Rendered pieces of the ledger read model: per-row render key, JSON fragment and Markdown
line on ``rm_ledger_rows``, and the per-case table ``rm_ledger_cases``, so a render streams
stored bytes instead of re-dumping the whole ledger.

The new columns and table start empty: the running code fills them lazily, at the first
render of each ledger (``projections/read_models/ledger_cases.py``), exactly as it does after a
replay.
This revision imports no live code, so changing how pieces are rendered never changes what
a historical migration does (``tests/test_migrations.py`` checks every revision).

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


def downgrade() -> None:
    op.drop_table("rm_ledger_cases")
    op.drop_index("ix_rm_ledger_rows_render", table_name="rm_ledger_rows")
    for column in ("markdown_line", "json_fragment", "render_key"):
        op.execute(f"ALTER TABLE rm_ledger_rows DROP COLUMN {column}")  # SQLite >= 3.35
