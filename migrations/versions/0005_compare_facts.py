"""``rm_compare_facts``: what ``benchledger compare`` needs of each ledger row, already reduced
(case, arm, whether the run counts or why not, its attempt values, usage, comparability facts).

Reading a dozen keys out of 30,000 stored rows with the database's JSON functions was a third
of a compare; these few values per row are computed once, at the first compare that reads the
row, and kept while the row stays at the same position
(``projections/read_models/compare_facts.py``).
The table starts empty: the running code fills it lazily, exactly as after a rebuild. This
revision imports no live code (``tests/test_migrations.py`` checks every revision).

Revision ID: 0005_compare_facts
Revises: 0004_ledger_row_once
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_compare_facts"
down_revision = "0004_ledger_row_once"
branch_labels = None
depends_on = None

_POS = sa.BigInteger().with_variant(sa.Integer, "sqlite")


def upgrade() -> None:
    op.create_table(
        "rm_compare_facts",
        sa.Column("ledger_id", sa.String(300), primary_key=True),
        sa.Column("benchmark_id", sa.String(200), primary_key=True),
        sa.Column("run_id", sa.String(200), primary_key=True),
        sa.Column("position", _POS, nullable=False),
        sa.Column("facts", sa.Text, nullable=False),
        sa.Column("guard", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("rm_compare_facts")
