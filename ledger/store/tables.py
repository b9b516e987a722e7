"""The store's own tables as statements name them: names, columns, primary keys.

Generated from the models in ``ledger/store/schema.py``
by ``python -m benchledger.migrations.snapshot``;
do not edit by hand. ``ledger/store/table_spec.py`` says why the specs exist.
"""

from __future__ import annotations

from benchledger.ledger.store.table_spec import TableSpec

EVENTS = TableSpec(
    "events",
    (
        "position",
        "event_id",
        "stream",
        "stream_version",
        "event_type",
        "schema_version",
        "payload",
        "metadata",
        "correlation_id",
        "recorded_at",
        "idempotency_key",
        "prev_hash",
        "hash",
    ),
    ("position",),
)
PROJECTION_CHECKPOINTS = TableSpec("projection_checkpoints", ("name", "position"), ("name",))
