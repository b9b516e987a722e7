"""Read-model tables: everything users read is rebuilt from the event table into these.

They share ``ledger.store.schema.metadata`` so one Alembic history creates them; statements use the
specs in ``projections/read_models/tables.py``. Rows keep their full JSON
(``row``/``record``/``document``) next
to the few columns queries filter on, so rendering never re-derives anything.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Index, Integer, LargeBinary, String, Table, Text

from benchledger.ledger.store.schema import metadata

_Position = BigInteger().with_variant(Integer, "sqlite")

ledgers = Table(
    "rm_ledgers",
    metadata,
    Column("ledger_id", String(300), primary_key=True),
    Column("ledger_path", Text, nullable=False),
    Column("update_policy", Text, nullable=True),
    Column("created_at", String(32), nullable=False),
    Column("updated_at", String(32), nullable=False),
    Column("position", _Position, nullable=False),
)

ledger_rows = Table(
    "rm_ledger_rows",
    metadata,
    Column("ledger_id", String(300), primary_key=True),
    Column("run_id", String(200), primary_key=True),
    Column("benchmark_id", String(200), nullable=False),
    Column("case_id", String(300), nullable=False),
    Column("recorded_at", String(40), nullable=False),
    Column("archived", Integer, nullable=False),
    # NULL: the row is the one the event at ``position`` carries (stored once, in the event).
    Column("row", Text, nullable=True),
    Column("position", _Position, nullable=False),
    # Rendered pieces (projections/publishing/ledger_fragments.py), so a render streams stored
    # bytes in
    # render_key order instead of re-dumping the ledger. NULL render_key: ids holding NUL.
    Column("render_key", LargeBinary, nullable=True),
    Column("json_fragment", LargeBinary, nullable=True),
    Column("markdown_line", Text, nullable=True),
)
# By case; with position and run id it also covers the read that checks the aggregate's
# per-case results (revision 0008).
Index(
    "ix_rm_ledger_rows_case",
    ledger_rows.c.ledger_id,
    ledger_rows.c.benchmark_id,
    ledger_rows.c.case_id,
    ledger_rows.c.position,
    ledger_rows.c.run_id,
)
Index("ix_rm_ledger_rows_render", ledger_rows.c.ledger_id, ledger_rows.c.render_key)
# Covers the positions read that checks the per-row fact caches (revision 0007).
Index(
    "ix_rm_ledger_rows_positions",
    ledger_rows.c.ledger_id,
    ledger_rows.c.benchmark_id,
    ledger_rows.c.run_id,
    ledger_rows.c.position,
)

# compare's reduced view of each ledger row (``projections/read_models/compare_facts.py``), filled
# at the
# first ``compare`` that reads the row and valid while ``position`` equals the row's own; keyed
# by the row's benchmark so a compare reads its benchmark's entries only.
compare_facts = Table(
    "rm_compare_facts",
    metadata,
    Column("ledger_id", String(300), primary_key=True),
    Column("benchmark_id", String(200), primary_key=True),
    Column("run_id", String(200), primary_key=True),
    Column("position", _Position, nullable=False),
    Column("facts", Text, nullable=False),
    Column("guard", Text, nullable=False),
)

# ``run-ledger-aggregate``'s reduced view of each ledger row
# (``projections/read_models/aggregate_facts.py``):
# its verdict and sort keys, and apart the summary fields the aggregate prints for a chosen run;
# filled like compare's and valid on the same terms.
aggregate_facts = Table(
    "rm_aggregate_facts",
    metadata,
    Column("ledger_id", String(300), primary_key=True),
    Column("benchmark_id", String(200), primary_key=True),
    Column("run_id", String(200), primary_key=True),
    Column("position", _Position, nullable=False),
    Column("facts", Text, nullable=False),
    Column("summary", Text, nullable=False),
)

# ``run-ledger-aggregate``'s result per case (``projections/read_models/aggregate_cases.py``):
# valid while
# the case's rows are the same (``row_count`` of them, the last written at ``position``).
aggregate_cases = Table(
    "rm_aggregate_cases",
    metadata,
    Column("ledger_id", String(300), primary_key=True),
    Column("benchmark_id", String(200), primary_key=True),
    Column("case_id", String(300), primary_key=True),
    Column("row_count", Integer, nullable=False),
    Column("position", _Position, nullable=False),
    Column("version", String(40), nullable=False),
    Column("active", Integer, nullable=False),
    Column("noncanonical", Integer, nullable=False),
    Column("run_count", Integer, nullable=False),
    Column("bucket", String(40), nullable=False),
    Column("plain", Integer, nullable=False),
    Column("summary", Text, nullable=False),
)

# One row per case node of a ledger (keys as the document names them): its counts, its JSON
# up to its runs and its Markdown lines, refreshed for the cases an event touched.
ledger_cases = Table(
    "rm_ledger_cases",
    metadata,
    Column("ledger_id", String(300), primary_key=True),
    Column("benchmark_id", String(200), primary_key=True),
    Column("case_id", String(300), primary_key=True),
    Column("active_run_count", Integer, nullable=False),
    Column("archived_run_count", Integer, nullable=False),
    Column("json_head", LargeBinary, nullable=False),
    Column("decision_line", Text, nullable=True),
    Column("backlog", Text, nullable=True),
    Column("position", _Position, nullable=False),
)

goal_runs = Table(
    "rm_goal_runs",
    metadata,
    Column("goal_id", String(200), primary_key=True),
    Column("stem", String(300), primary_key=True),
    Column("run_key", String(300), nullable=True),
    Column("generated_at", String(40), nullable=False),
    Column("record", Text, nullable=False),
    Column("position", _Position, nullable=False),
)

global_registry = Table(
    "rm_global_registry",
    metadata,
    Column("registry_id", String(100), primary_key=True),
    Column("document", Text, nullable=False),
    Column("position", _Position, nullable=False),
)

rollout_events = Table(
    "rm_rollout_events",
    metadata,
    Column("goal_id", String(200), primary_key=True),
    Column("event_id", String(200), primary_key=True),
    Column("event_kind", String(100), nullable=False),
    Column("status", String(100), nullable=False),
    Column("record", Text, nullable=False),
    Column("position", _Position, nullable=False),
)

exports = Table(
    "rm_exports",
    metadata,
    Column("path", String(500), primary_key=True),
    Column("kind", String(50), nullable=False),
    Column("sha256", String(64), nullable=False),
    Column("position", _Position, nullable=False),
)
