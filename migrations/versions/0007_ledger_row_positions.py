"""``ix_rm_ledger_rows_positions``: each ledger row's run id and position, by benchmark, in an
index of their own.

Why: ``run-ledger-aggregate`` and ``compare`` keep per-row facts valid while the row stays at
the same position, so each first reads every row's position of the benchmark. Through the case
index that read visits the row's own page for each row, and a row holds its text and its
rendered pieces (kilobytes): 0.12 s for the 66,000 rows of the 1M-event bench store's largest
benchmark, against 0.035 s from this covering index. The index is also what a snapshot is read
through, where rows always hold their text. It is built by the database from rows already
there; nothing else changes. This revision imports no live code (``tests/test_migrations.py``
checks every revision).

Revision ID: 0007_ledger_row_positions
Revises: 0006_aggregate_facts
Create Date: 2026-12-02
"""

from __future__ import annotations

from alembic import op

revision = "0007_ledger_row_positions"
down_revision = "0006_aggregate_facts"
branch_labels = None
depends_on = None

_COLUMNS = ["ledger_id", "benchmark_id", "run_id", "position"]


def upgrade() -> None:
    op.create_index("ix_rm_ledger_rows_positions", "rm_ledger_rows", _COLUMNS)


def downgrade() -> None:
    op.drop_index("ix_rm_ledger_rows_positions", table_name="rm_ledger_rows")
