"""Writing a read command's cache entries (compare's and the aggregate's per-row facts) without
ever making the command wait or fail for them.

Why apart: both caches are filled by commands that only read, after they have read, so the
same rules hold for both: a transaction of their own, no queue behind another process's write
lock, and a store that refuses the write (read-only, locked, full) simply stays unfilled.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from benchledger.ledger.core.errors import InputError
from benchledger.projections.read_models.ledger_row_text import ROWS, row_text
from benchledger.projections.read_models.upsert import upsert_rows

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Connection
    from benchledger.ledger.store.table_spec import TableSpec


def keep_entries(conn: Connection, table: TableSpec, entries: Sequence[tuple[Any, ...]]) -> None:
    """Upsert ``entries`` (tuples in ``table.columns`` order) in a transaction of their own
    (the read one is ended first). On SQLite the attempt does not wait for another process's
    write lock (busy timeout 0 for it); a refusal is swallowed: the values are computed again
    at the next read instead."""
    if not entries:
        return
    conn.rollback()
    # the store's one-sentence errors (read-only, locked) are InputErrors
    refused: tuple[type[Exception], ...] = (InputError, *conn.errors)
    sqlite = conn.dialect == "sqlite"
    if sqlite:
        timeout = conn.execute("PRAGMA busy_timeout").scalar()
        conn.execute("PRAGMA busy_timeout = 0")
    try:
        if sqlite:  # the tuples as they are, in key order (the key leads each tuple)
            conn.executemany(table.upsert_sql, sorted(entries))
        else:
            columns = table.columns
            upsert_rows(conn, table, [dict(zip(columns, e, strict=True)) for e in entries])
        conn.commit()
    except refused:
        conn.rollback()
    finally:
        if sqlite:
            conn.execute(f"PRAGMA busy_timeout = {int(timeout)}")
            conn.rollback()


def entries_on_their_rows(
    conn: Connection, table: TableSpec, columns: Sequence[str]
) -> Iterator[tuple[Any, ...]]:
    """(ledger id, run id, row text, *``columns``) of every entry of ``table`` whose position
    is its row's (the only entries a read would use): what ``rebuild --verify`` checks each
    cache's entries against."""
    picked = ", ".join(f"f.{c}" for c in columns)
    yield from conn.stream(
        f"SELECT r.ledger_id, r.run_id, {row_text(conn)}, {picked} FROM {ROWS}"
        f" JOIN {table.name} f ON f.ledger_id = r.ledger_id"
        " AND f.benchmark_id = r.benchmark_id AND f.run_id = r.run_id AND f.position = r.position",
        batch=1000,
    )
