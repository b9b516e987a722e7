"""Where a ledger row's text is read from: ``rm_ledger_rows."row"``, or, when that is NULL,
the ``ledger_upserted`` event at the row's ``position``, which carries the same row.

Why: the event already holds the row (~2 KB); the read model keeping a second copy doubled
the store's size per run and cost a serialisation per replayed row. Rows from events that
carry several rows (archive, restore, merge, import) keep their text in the read model, as
do replays into scratch databases that hold no events (``--as-of``, snapshots).

Readers select ``row_text(conn)`` ``FROM`` ``ROWS`` (the read model as ``r``): the text is
then the row's JSON either way, so they parse it as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Connection
ROWS = 'rm_ledger_rows r LEFT JOIN events e ON r."row" IS NULL AND e.position = r.position'


def row_text(conn: Connection) -> str:
    """SQL for the row's JSON text (``ROWS`` must be the ``FROM``)."""
    if conn.dialect == "sqlite":
        return """coalesce(r."row", json_extract(e.payload, '$.row'))"""
    return """coalesce(r."row", ((e.payload)::json -> 'row')::text)"""
