"""A SQLite file read as it would stand after writes that are never kept.

Why: a snapshot of a million-event store is a file of about a gigabyte, and copying it for every
``--as-of`` took longer than replaying the few thousand events after it. An overlay opens the
snapshot itself in one transaction that every user of the database joins and nobody commits;
the replayed tail stays in this connection's page cache (``cache_spill`` off: no dirty page is
ever written to the file, so the file is exactly as it was, whatever happens to the process)
and is dropped when the overlay is disposed.

While it holds its changes the connection holds the file's write lock (readers are not
blocked): a second overlay of the same file is not opened (``open_overlay`` returns None) and
its caller copies the file instead, as it does when the file or its directory is not writable.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from benchledger.ledger.store.sqlite import SqliteConnection, SqliteDatabase, _connect


class _Joined(SqliteConnection):
    """The overlay's one connection as its users see it: their commits and rollbacks are the
    overlay's to decide, so both are no-ops here."""

    def commit(self) -> None:
        pass

    def rollback(self) -> None:
        pass


class SqliteOverlay(SqliteDatabase):
    """See the module doc; made by ``open_overlay``."""

    def __init__(self, path: Path, raw: sqlite3.Connection) -> None:
        super().__init__(f"sqlite:///{path}")
        self._raw: sqlite3.Connection | None = raw

    @contextmanager
    def connect(self) -> Iterator[SqliteConnection]:
        if self._raw is None:
            raise RuntimeError("the overlay was disposed")
        yield _Joined(self._raw, path=self.path)

    @contextmanager
    def begin(
        self, *, attach: Mapping[str, str] | None = None, temp_in_memory: bool = False
    ) -> Iterator[SqliteConnection]:
        # ``temp_in_memory`` is ignored: the overlay's one transaction is open already.
        if attach:  # SQLite refuses ATTACH inside the overlay's transaction
            raise ValueError("an overlay cannot attach other databases")
        with self.connect() as conn:
            yield conn

    def refuse_writes(self) -> None:
        """From now on refuse writes (what a user's ``sql`` statement runs under)."""
        assert self._raw is not None
        self._raw.execute("PRAGMA query_only=ON")

    def dispose(self) -> None:
        if self._raw is not None:
            self._raw.rollback()
            self._raw.close()
            self._raw = None
        super().dispose()


def open_overlay(path: Path) -> SqliteOverlay | None:
    """An overlay of the SQLite file ``path``, or None when it cannot be had without waiting
    or writing: the file or its directory is not writable (SQLite needs both for the write
    lock), or another process holds the lock (another overlay of the same snapshot)."""
    if not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK | os.X_OK)):
        return None
    raw = _connect(str(path), timeout=0)
    try:
        raw.execute("PRAGMA foreign_keys=ON")
        raw.execute("PRAGMA cache_spill=OFF")
        raw.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError:
        raw.close()
        return None
    return SqliteOverlay(path, raw)
