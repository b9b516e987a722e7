"""``rm_aggregate_cases``: ``run-ledger-aggregate``'s result per case, and the case index
extended to cover the read that checks those results.

Why: with every row's facts kept (revision 0006) the aggregate of the 1M-event bench store's
largest benchmark (29,722 cases, 66,000 rows) still decoded all 66,000 rows' facts and chose
a run in every case at each read, 1.1-1.4 s, and an ``--as-of`` read from a snapshot paid the
same after its tail replay. A case's result is a function of its rows alone, so it is kept per
case with the count of the case's rows and the latest position among them: a row joining,
leaving or being rewritten changes one of the two, and only such cases are worked out again
(``projections/read_models/aggregate_cases.py``). The case index gains ``position`` and ``run_id``
so
that check, and the run ids of the cases to redo, are read from the index alone. Nothing is
filled here: the table fills at the next aggregate. This revision imports no live code
(``tests/test_migrations.py`` checks every revision).

Revision ID: 0008_aggregate_cases
Revises: 0007_ledger_row_positions
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008_aggregate_cases"
down_revision = "0007_ledger_row_positions"
branch_labels = None
depends_on = None

_POS = sa.BigInteger().with_variant(sa.Integer, "sqlite")
_CASE_INDEX = "ix_rm_ledger_rows_case"
_CASE = ["ledger_id", "benchmark_id", "case_id"]


def upgrade() -> None:
    op.create_table(
        "rm_aggregate_cases",
        sa.Column("ledger_id", sa.String(300), primary_key=True),
        sa.Column("benchmark_id", sa.String(200), primary_key=True),
        sa.Column("case_id", sa.String(300), primary_key=True),
        sa.Column("row_count", sa.Integer, nullable=False),
        sa.Column("position", _POS, nullable=False),
        sa.Column("version", sa.String(40), nullable=False),
        sa.Column("active", sa.Integer, nullable=False),
        sa.Column("noncanonical", sa.Integer, nullable=False),
        sa.Column("run_count", sa.Integer, nullable=False),
        sa.Column("bucket", sa.String(40), nullable=False),
        sa.Column("plain", sa.Integer, nullable=False),
        sa.Column("summary", sa.Text, nullable=False),
    )
    op.drop_index(_CASE_INDEX, table_name="rm_ledger_rows")
    op.create_index(_CASE_INDEX, "rm_ledger_rows", [*_CASE, "position", "run_id"])


def downgrade() -> None:
    op.drop_index(_CASE_INDEX, table_name="rm_ledger_rows")
    op.create_index(_CASE_INDEX, "rm_ledger_rows", _CASE)
    op.drop_table("rm_aggregate_cases")
