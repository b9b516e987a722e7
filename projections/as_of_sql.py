"""``sql --as-of``: one read-only statement over the store as it stood at a past moment.

The statement runs on the scratch SQLite database of ``--as-of`` (so in SQLite's dialect,
whatever the store), opened read-only: its read models and views as replayed to that moment,
and, when the statement names ``events`` or ``events_v``, the events up to that position
copied beside them (copying a million events is not free, so only then).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ledger.event_rows import EVENT_COLUMNS

if TYPE_CHECKING:
    from ledger.connection import Database
    from ledger.store import EventStore

_NAMES_EVENTS = re.compile(r"\bevents(_v)?\b", re.IGNORECASE)
_INSERT = (
    f"INSERT INTO events ({', '.join(EVENT_COLUMNS)}) "
    f"VALUES ({', '.join('?' * len(EVENT_COLUMNS))})"
)


def query_as_of(
    opened: Any, as_of: str, statement: str, *, limit: int, timeout: float, progress: Any = None
) -> dict[str, Any]:
    from ledger.db_sqlite import SqliteDatabase
    from ledger.sql_query import checked_statement, query_sqlite
    from projections.as_of import read_models_as_of
    from projections.snapshots import default_snapshot_dir

    statement = checked_statement(statement)  # refused before any replay
    snapshots = default_snapshot_dir(opened.location)
    with read_models_as_of(
        opened.store, opened.projections, as_of, snapshot_dir=snapshots, progress=progress
    ) as view:
        if _NAMES_EVENTS.search(statement):
            copy_events(opened.store, view.database, view.moment.position)
        view.database.dispose()
        reader = SqliteDatabase(view.database.url, read_only=True)
        try:
            result = query_sqlite(reader, statement, limit=limit, timeout=timeout)
        finally:
            reader.dispose()
    return {"as_of": view.as_dict(), **result}


def copy_events(store: EventStore, scratch: Database, upto: int) -> None:
    """Events 1..``upto`` into the scratch database's (empty) event table."""
    live = store.database
    from ledger.db_sqlite import SqliteDatabase

    if isinstance(live, SqliteDatabase) and not live.in_memory:
        # one statement in SQLite itself (ATTACH is refused inside a transaction)
        with scratch.connect() as conn:
            raw = conn.dbapi_connection()
            raw.execute("ATTACH DATABASE ? AS live", (str(Path(live.path).absolute()),))
            try:
                raw.execute("BEGIN")
                raw.execute(
                    "INSERT INTO main.events SELECT * FROM live.events WHERE position <= ?",
                    (upto,),
                )
                raw.execute("COMMIT")
            finally:
                if raw.in_transaction:
                    raw.execute("ROLLBACK")
                raw.execute("DETACH DATABASE live")
        return
    with scratch.begin() as conn:
        for rows in store.read_rows(to_position=upto, batch_size=5000):
            conn.executemany(_INSERT, [tuple(r[c] for c in EVENT_COLUMNS) for r in rows])
