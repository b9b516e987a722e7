"""The read-model tables as statements name them: names, columns, primary keys.

Generated from the models in ``projections/read_models/schema.py``
by ``python -m benchledger.migrations.snapshot``;
do not edit by hand. ``ledger/store/table_spec.py`` says why the specs exist.
"""

from __future__ import annotations

from benchledger.ledger.store.table_spec import TableSpec

LEDGERS = TableSpec(
    "rm_ledgers",
    ("ledger_id", "ledger_path", "update_policy", "created_at", "updated_at", "position"),
    ("ledger_id",),
)
LEDGER_ROWS = TableSpec(
    "rm_ledger_rows",
    (
        "ledger_id",
        "run_id",
        "benchmark_id",
        "case_id",
        "recorded_at",
        "archived",
        "row",
        "position",
        "render_key",
        "json_fragment",
        "markdown_line",
    ),
    ("ledger_id", "run_id"),
)
COMPARE_FACTS = TableSpec(
    "rm_compare_facts",
    ("ledger_id", "benchmark_id", "run_id", "position", "facts", "guard"),
    ("ledger_id", "benchmark_id", "run_id"),
)
AGGREGATE_FACTS = TableSpec(
    "rm_aggregate_facts",
    ("ledger_id", "benchmark_id", "run_id", "position", "facts", "summary"),
    ("ledger_id", "benchmark_id", "run_id"),
)
AGGREGATE_CASES = TableSpec(
    "rm_aggregate_cases",
    (
        "ledger_id",
        "benchmark_id",
        "case_id",
        "row_count",
        "position",
        "version",
        "active",
        "noncanonical",
        "run_count",
        "bucket",
        "plain",
        "summary",
    ),
    ("ledger_id", "benchmark_id", "case_id"),
)
LEDGER_CASES = TableSpec(
    "rm_ledger_cases",
    (
        "ledger_id",
        "benchmark_id",
        "case_id",
        "active_run_count",
        "archived_run_count",
        "json_head",
        "decision_line",
        "backlog",
        "position",
    ),
    ("ledger_id", "benchmark_id", "case_id"),
)
GOAL_RUNS = TableSpec(
    "rm_goal_runs",
    ("goal_id", "stem", "run_key", "generated_at", "record", "position"),
    ("goal_id", "stem"),
)
GLOBAL_REGISTRY = TableSpec(
    "rm_global_registry", ("registry_id", "document", "position"), ("registry_id",)
)
ROLLOUT_EVENTS = TableSpec(
    "rm_rollout_events",
    ("goal_id", "event_id", "event_kind", "status", "record", "position"),
    ("goal_id", "event_id"),
)
EXPORTS = TableSpec("rm_exports", ("path", "kind", "sha256", "position"), ("path",))
