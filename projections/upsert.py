"""The one write every read model makes: insert-or-replace rows by primary key.

Its own module so the per-case read model (``ledger_cases``) and the projections that call it
(``read_models``) both import it without importing each other.
"""

from __future__ import annotations

from operator import itemgetter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ledger.connection import Connection
    from ledger.table_spec import TableSpec


def upsert_rows(conn: Connection, table: TableSpec, rows: list[dict[str, Any]]) -> None:
    """Insert-or-replace by primary key, in bulk, on both backends (the last row per key)."""
    if not rows:
        return
    key_of = itemgetter(*table.primary_key)  # C-level tuples: a replay writes 100,000s
    deduped = {key_of(r): r for r in rows}
    values_of = itemgetter(*table.columns)
    conn.executemany(table.upsert_sql, [values_of(r) for r in deduped.values()])
