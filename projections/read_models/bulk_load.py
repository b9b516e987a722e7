"""Settings for loading read models in bulk (a rebuild, an ``--as-of`` replay): tables
emptied the way each database frees them, a bigger SQLite page cache, secondary indexes
built once after the load."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Connection

# SQLite page cache for a rebuild (KiB): room for the read models of a large store while
# keeping the replay process well under its 500 MB budget.
REBUILD_CACHE_KIB = 64 * 1024


def empty_tables(conn: Connection, names: Sequence[str]) -> None:
    """Remove every row of ``names``, inside the caller's transaction. PostgreSQL truncates:
    a ``DELETE`` there leaves each row behind as a dead tuple for the next vacuum, so a store
    rebuilt a few times grew to several times its size, and the rebuild paid for it."""
    if conn.dialect == "postgresql":
        conn.execute(f"TRUNCATE {', '.join(names)}")
        return
    for name in reversed(names):
        conn.execute(f"DELETE FROM {name}")


@contextmanager
def bulk_settings(conn: Connection, attached: str | None = None) -> Iterator[None]:
    """A bigger SQLite page cache for the one long rebuild transaction, so flushes into a
    large read model find its pages in memory instead of re-reading them from the OS (the
    default is 2 MB); restored afterwards because the connection goes back to the pool."""
    if conn.dialect != "sqlite":
        yield
        return
    saved = int(conn.execute("PRAGMA cache_size").scalar())
    conn.execute(f"PRAGMA cache_size=-{REBUILD_CACHE_KIB}")
    if attached:  # the attached database the events are read from has a cache of its own
        conn.execute(f"PRAGMA {attached}.cache_size=-{REBUILD_CACHE_KIB}")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA cache_size={saved}")


@contextmanager
def indexes_built_after(conn: Connection, tables: Sequence[str]) -> Iterator[None]:
    """Drop the secondary indexes of ``tables`` (empty, about to be loaded) and create them
    again after the load, in the same transaction: one sort per index instead of a B-tree
    insert per row. Primary keys and unique constraints stay (upserts need them)."""
    if not tables:
        yield
        return
    found = _secondary_indexes(conn, tables)
    for name, _sql in found:
        conn.execute(f"DROP INDEX {name}")
    yield
    for _name, sql in found:
        conn.execute(sql)


def _secondary_indexes(conn: Connection, tables: Sequence[str]) -> list[tuple[str, str]]:
    """``(name, CREATE INDEX statement)`` of each plain index on ``tables``."""
    marks = ", ".join("?" * len(tables))
    if conn.dialect == "sqlite":
        query = (
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
            f" AND tbl_name IN ({marks}) ORDER BY name"
        )
    else:
        query = (
            "SELECT i.relname, pg_get_indexdef(i.oid) FROM pg_index x"
            " JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid"
            " JOIN pg_namespace n ON n.oid = t.relnamespace"
            " WHERE n.nspname = current_schema() AND NOT x.indisprimary AND NOT x.indisunique"
            f" AND t.relname IN ({marks}) ORDER BY i.relname"
        )
    return [(name, sql) for name, sql in conn.execute(query, list(tables))]
