"""The one write every read model makes: insert-or-replace rows by primary key.

Its own module so the per-case read model (``ledger_cases``) and the projections that call it
(``read_models``) both import it without importing each other.
"""

from __future__ import annotations

from operator import itemgetter
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Connection
    from benchledger.ledger.store.table_spec import TableSpec


def upsert_rows(conn: Connection, table: TableSpec, rows: list[dict[str, Any]]) -> None:
    """Insert-or-replace by primary key, in bulk, on both backends (the last row per key)."""
    if not rows:
        return
    key_of = itemgetter(*table.primary_key)  # C-level tuples: a replay writes 100,000s
    deduped = {key_of(r): r for r in rows}
    values_of = itemgetter(*table.columns)
    # In key order: each insert lands next to the previous one in the primary-key B-tree.
    ordered = [deduped[key] for key in sorted(deduped)] if len(deduped) > 1 else deduped.values()
    if conn.dialect == "postgresql" and _as_one_statement(conn, table, ordered):
        return
    conn.executemany(table.upsert_sql, [values_of(r) for r in ordered])


def _as_one_statement(conn: Connection, table: TableSpec, rows: Any) -> bool:
    """PostgreSQL: every row in one statement, as one JSON document the server turns into rows
    of the table's type (``json_populate_recordset``). Sent row by row (``executemany``), a
    replay spent most of its time in the driver's per-row work (bench/README.md, issue 18).
    False when a value has no JSON form (bytes: the render cache's pieces), for the caller to
    send the rows one by one."""
    try:
        document = orjson.dumps([{c: r[c] for c in table.columns} for r in rows])
    except TypeError:
        return False
    conn.execute(table.upsert_from_json_sql, (document.decode(),))
    return True
