"""``sql --as-of``: one read-only statement over the store as it stood at a past moment.

The statement runs on the scratch SQLite database of ``--as-of`` (so in SQLite's dialect,
whatever the store), opened read-only: its read models and views as replayed to that moment,
and, when the statement names ``events`` or ``events_v``, the events up to that position
copied beside them (copying a million events is not free, so only then).
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchledger.ledger.store.database import create_at_head
from benchledger.ledger.store.event_rows import EVENT_COLUMNS
from benchledger.ledger.store.sql_query import checked_statement, query_sqlite
from benchledger.ledger.store.sqlite import SqliteDatabase
from benchledger.ledger.store.sqlite_overlay import SqliteOverlay
from benchledger.projections.history.as_of import read_models_as_of
from benchledger.projections.history.snapshots import default_snapshot_dir

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Database
    from benchledger.ledger.store.event_store import EventStore
    from benchledger.projections.read_models.engine import ProjectionEngine
_NAMES_EVENTS = re.compile(r"\bevents(_v)?\b", re.IGNORECASE)
_INSERT = (
    f"INSERT INTO events ({', '.join(EVENT_COLUMNS)}) "
    f"VALUES ({', '.join('?' * len(EVENT_COLUMNS))})"
)


def query_as_of(
    opened: Any, as_of: str, statement: str, *, limit: int, timeout: float, progress: Any = None
) -> dict[str, Any]:
    statement = checked_statement(statement)  # refused before any replay
    names_events = bool(_NAMES_EVENTS.search(statement))
    snapshots = default_snapshot_dir(opened.location)
    with read_models_as_of(
        opened.store,
        opened.projections,
        as_of,
        snapshot_dir=snapshots,
        progress=progress,
        names=projections_read_by(opened.projections, statement),
        own_file=names_events,
    ) as view:
        if names_events:
            copy_events(opened.store, view.database, view.moment.position)
        if isinstance(view.database, SqliteOverlay):  # its replayed tail is in its connection
            view.database.refuse_writes()
            result = query_sqlite(view.database, statement, limit=limit, timeout=timeout)
        else:
            view.database.dispose()
            reader = SqliteDatabase(view.database.url, read_only=True)
            try:
                result = query_sqlite(reader, statement, limit=limit, timeout=timeout)
            finally:
                reader.dispose()
    return {"as_of": view.as_dict(), **result}


def projections_read_by(projections: ProjectionEngine, statement: str) -> list[str] | None:
    """The projections whose tables ``statement`` reads, as SQLite's authorizer reports them
    while it compiles the statement on an empty store at the schema head (a view reports the
    tables under it). Only those are replayed: a query of the ledger rows does not wait for
    the goal runs, rollouts and exports. None (replay all) when it does not compile there;
    running it reports why."""

    owner = {t.name: p.name for p in projections.projections.values() for t in p.tables}
    read: set[str] = set()

    def note(action: int, table: str | None, *_: object) -> int:
        if action == sqlite3.SQLITE_READ and table in owner:
            read.add(owner[table])
        return sqlite3.SQLITE_OK

    schema = SqliteDatabase("sqlite://")
    try:
        create_at_head(schema)
        with schema.connect() as conn:
            raw = conn.dbapi_connection()
            raw.set_authorizer(note)
            try:
                raw.execute(f"EXPLAIN {statement}")
            except sqlite3.Error:
                return None
            finally:
                raw.set_authorizer(None)
    finally:
        schema.dispose()
    return sorted(read)


def copy_events(store: EventStore, scratch: Database, upto: int) -> None:
    """Events 1..``upto`` into the scratch database's (empty) event table."""
    live = store.database
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
