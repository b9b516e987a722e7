"""``rm_aggregate_facts``: what ``run-ledger-aggregate`` needs of each ledger row, already
reduced (its bucket and countability, sort keys, and the summary fields printed for a chosen run).

Parsing and judging 66,000 whole rows was most of an aggregate's 4.6 s on the 1M-event bench
store; these values are a pure function of the row, computed at the first aggregate that reads
the row and kept while the row stays at the same position
(``projections/read_models/aggregate_facts.py``).
A table of its own rather than columns of ``rm_compare_facts``: the two caches are filled by
different commands and versioned apart, so a compare need not fill the aggregate's half (nor
the reverse) and a change to one set of rules leaves the other's entries valid.
The table starts empty: the running code fills it lazily, exactly as after a rebuild. This
revision imports no live code (``tests/test_migrations.py`` checks every revision).

Revision ID: 0006_aggregate_facts
Revises: 0005_compare_facts
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_aggregate_facts"
down_revision = "0005_compare_facts"
branch_labels = None
depends_on = None

_POS = sa.BigInteger().with_variant(sa.Integer, "sqlite")


def upgrade() -> None:
    op.create_table(
        "rm_aggregate_facts",
        sa.Column("ledger_id", sa.String(300), primary_key=True),
        sa.Column("benchmark_id", sa.String(200), primary_key=True),
        sa.Column("run_id", sa.String(200), primary_key=True),
        sa.Column("position", _POS, nullable=False),
        sa.Column("facts", sa.Text, nullable=False),
        sa.Column("summary", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("rm_aggregate_facts")
