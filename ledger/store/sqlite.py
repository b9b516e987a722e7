"""The embedded default: SQLite through the standard library's ``sqlite3``.

WAL mode with a busy timeout, so readers never block the writer and concurrent writers queue;
``BEGIN IMMEDIATE`` for every write transaction, so a writer takes the lock before it reads
what it will decide from. Python's own transaction handling is off: ``BEGIN`` is ours.
A closed connection goes back to a small pool instead of being closed: closing the last
connection to a WAL database checkpoints it, and a command connects several times.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Generator, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.store.connection import Params

BUSY_TIMEOUT_ENV = "BENCHLEDGER_BUSY_TIMEOUT"  # seconds a writer waits for another's lock
DEFAULT_BUSY_TIMEOUT_S = 30.0
MEMORY = ":memory:"
PAGE_SIZE = 16384
POOL_SIZE = 2  # the command's connection and a rebuild's second one


class SqliteResult:
    """A cursor with the few ``CursorResult`` methods the code uses."""

    __slots__ = ("_cursor",)

    def __init__(self, cursor: sqlite3.Cursor) -> None:
        self._cursor = cursor

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self._cursor)

    def all(self) -> list[Sequence[Any]]:
        return self._cursor.fetchall()

    def first(self) -> tuple[Any, ...] | None:
        row = self._cursor.fetchone()
        self._cursor.close()  # an unfinished statement would keep its read snapshot
        return row

    def scalar(self) -> Any:
        row = self.first()
        return None if row is None else row[0]


class SqliteConnection:
    """One ``sqlite3`` connection; the first statement opens a (deferred) transaction."""

    dialect = "sqlite"
    errors: tuple[type[Exception], ...] = (sqlite3.Error,)

    def __init__(
        self, raw: sqlite3.Connection, *, in_memory: bool = False, path: str = MEMORY
    ) -> None:
        self.raw = raw
        self.in_memory = in_memory
        self.path = path

    def _begin(self) -> None:
        if not self.raw.in_transaction:
            self.raw.execute("BEGIN")

    def execute(self, sql: str, params: Params = ()) -> SqliteResult:
        try:
            self._begin()
            return SqliteResult(self.raw.execute(sql, params))
        except sqlite3.DatabaseError as exc:
            raise explain(exc, self.path) from None

    def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        if rows:
            try:
                self._begin()
                self.raw.executemany(sql, rows)
            except sqlite3.DatabaseError as exc:
                raise explain(exc, self.path) from None

    def stream(
        self, sql: str, params: Params = (), *, batch: int = 1000
    ) -> Generator[Any, None, None]:
        """A cursor already fetches lazily, so this is a plain iteration."""
        yield from self.execute(sql, params)

    def dbapi_connection(self) -> sqlite3.Connection:
        return self.raw

    def commit(self) -> None:
        # a full disk often shows only here, when the pages reach the write-ahead log
        if self.raw.in_transaction:
            try:
                self.raw.execute("COMMIT")
            except sqlite3.DatabaseError as exc:
                raise explain(exc, self.path) from None

    def rollback(self) -> None:
        if self.raw.in_transaction:
            self.raw.execute("ROLLBACK")


class SqliteDatabase:
    """A SQLite file (or a private in-memory database, for tests)."""

    dialect = "sqlite"

    def __init__(self, url: str, *, read_only: bool = False, disposable: bool = False) -> None:
        """``disposable``: a scratch file thrown away after use
        (``projections/read_models/scratch.py``):
        no WAL and no syncs, since a crash loses nothing that matters; in WAL mode a replay's
        pages were written twice, to the log and again at the checkpoint."""
        self.url = url
        self.disposable = disposable
        self.path = url.removeprefix("sqlite:///") if url != "sqlite://" else MEMORY
        self.path = self.path or MEMORY
        self.read_only = read_only
        self.in_memory = self.path == MEMORY or self.path.startswith("file::memory:")
        self.busy_timeout = busy_timeout_seconds()
        self._memory: sqlite3.Connection | None = None
        self._memory_users = 0  # nested users of the one in-memory connection
        self._idle: list[sqlite3.Connection] = []
        self._checkpoint: threading.Thread | None = None
        self._immutable = False
        if not self.in_memory:
            self._check_file()

    def _check_file(self) -> None:
        """Refuse what is not a store file with a sentence, and open a store this user may
        read but not write read-only (every read command then works; a write says why not)."""
        path = Path(self.path)
        if path.exists() and not path.is_file():
            raise InputError(f"--db {self.path} is not a regular file: point --db at a store file")
        if not path.exists():
            if self.read_only:
                raise InputError(
                    "no benchledger store here yet: run a command with --execute first"
                )
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise InputError(
                    f"cannot create the store directory {path.parent}: {exc.strerror}"
                ) from None
            return
        directory_writable = os.access(path.parent, os.W_OK | os.X_OK)
        if not (os.access(path, os.W_OK) and directory_writable):
            self.read_only = True
            # WAL readers need the shared-memory file; when it cannot be created here and no
            # write-ahead log holds pages the file lacks, the file alone is the whole store.
            self._immutable = not directory_writable and not _has_wal_frames(path)

    def _open(self) -> sqlite3.Connection:
        if self.in_memory:
            # one shared connection: a second ``:memory:`` connection is another database
            if self._memory is None:
                self._memory = self._configure(_connect(MEMORY))
            return self._memory
        try:
            if self.read_only:
                uri = Path(self.path).absolute().as_uri() + "?mode=ro"
                uri += "&immutable=1" if self._immutable else ""
                raw = _connect(uri, uri=True, timeout=self.busy_timeout)
            else:
                raw = _connect(self.path, timeout=self.busy_timeout)
            return self._configure(raw)
        except sqlite3.DatabaseError as exc:
            raise explain(exc, self.path) from None

    def _configure(self, raw: sqlite3.Connection) -> sqlite3.Connection:
        # (the busy timeout is ``_connect``'s ``timeout``: sqlite3 sets it on the connection)
        if self.read_only:
            raw.execute("PRAGMA query_only=ON")
        elif not self.in_memory:
            # Only a new file takes the page size (before WAL writes its header): rows are JSON
            # of a few KB, and 16 KiB pages write a new store's first ingest in a quarter of
            # the page writes of the 4 KiB default.
            raw.execute(f"PRAGMA page_size={PAGE_SIZE}")
            if self.disposable:
                raw.execute("PRAGMA journal_mode=MEMORY")
                raw.execute("PRAGMA synchronous=OFF")
            else:
                _use_wal(raw)
                raw.execute("PRAGMA synchronous=NORMAL")
        raw.execute("PRAGMA foreign_keys=ON")
        return raw

    @contextmanager
    def connect(self) -> Iterator[SqliteConnection]:
        """A connection whose uncommitted work is rolled back when the block ends."""
        if self.in_memory:
            yield from self._memory_connection()
            return
        try:
            raw: sqlite3.Connection | None = self._idle.pop()
        except IndexError:  # none idle (a checkpoint thread may have taken the last one)
            raw = None
        conn = SqliteConnection(raw or self._open(), path=self.path)
        try:
            yield conn
        finally:
            self._release(conn)

    def _memory_connection(self) -> Iterator[SqliteConnection]:
        """The one in-memory connection; a nested user joins the outer one's transaction, and
        only the outermost rolls back what was left uncommitted."""
        conn = SqliteConnection(self._open(), in_memory=True)
        self._memory_users += 1
        try:
            yield conn
        finally:
            self._memory_users -= 1
            if self._memory_users == 0:
                conn.rollback()

    def _release(self, conn: SqliteConnection) -> None:
        try:
            conn.rollback()
        except sqlite3.Error:
            conn.raw.close()  # unusable: never pooled
            raise
        if len(self._idle) < POOL_SIZE:
            self._idle.append(conn.raw)
        else:
            conn.raw.close()

    @contextmanager
    def begin(
        self, *, attach: Mapping[str, str] | None = None, temp_in_memory: bool = False
    ) -> Iterator[SqliteConnection]:
        """A write transaction; ``attach``: other database files (name -> path) it may read,
        attached before it begins (SQLite refuses to inside one) and detached after.

        ``temp_in_memory``: SQLite's temporary files of this transaction (``temp_store``) stay
        in memory, set before it begins (SQLite refuses the change inside one if a temporary
        table is open) and reset after. For transactions whose temporary data is bounded by
        one statement: the multi-row event INSERT goes through a temporary table (the
        append-only trigger reads the events table) and a statement journal, which otherwise
        are files in SQLite's temporary directory, written and deleted statement by statement
        (~6 MB for a 3,000-trial ingest). Not for a rebuild, whose sorts and index builds would
        then be held in memory whole."""
        with self.connect() as conn:
            if self.in_memory and self._memory_users > 1 and conn.raw.in_transaction:
                yield conn  # nested in a transaction on the one connection: part of it
                return
            conn.rollback()  # an in-memory connection's earlier reads
            for name, path in (attach or {}).items():
                conn.raw.execute(f"ATTACH DATABASE ? AS {name}", (path,))
            if temp_in_memory:
                conn.raw.execute("PRAGMA temp_store=MEMORY")
            try:
                try:
                    conn.raw.execute("BEGIN" if self.read_only else "BEGIN IMMEDIATE")
                except sqlite3.DatabaseError as exc:
                    raise explain(exc, self.path) from None
                yield conn
                conn.commit()
            finally:
                conn.rollback()
                if temp_in_memory:  # the pooled connection goes back to the default
                    conn.raw.execute("PRAGMA temp_store=DEFAULT")
                for name in attach or {}:
                    conn.raw.execute(f"DETACH DATABASE {name}")

    def sqlalchemy_engine(self) -> Any:
        """For Alembic: its connections get this module's settings and explicit ``BEGIN``
        (pysqlite's own transaction handling would run DDL outside the migration's
        transaction)."""
        from sqlalchemy import create_engine, event

        if self.in_memory:
            from sqlalchemy.pool import StaticPool

            raw = self._open()
            engine = create_engine("sqlite://", creator=lambda: raw, poolclass=StaticPool)
        else:
            engine = create_engine(self.url, creator=self._open)

        @event.listens_for(engine, "begin")
        def _on_begin(conn) -> None:  # noqa: ANN001 - SQLAlchemy's own type
            conn.exec_driver_sql("BEGIN IMMEDIATE")

        return engine

    def checkpoint_soon(self) -> None:
        """Copy the WAL into the database file on a thread while the caller goes on (SQLite
        releases the GIL meanwhile): the last close would otherwise copy a large command's
        pages itself, ~20 ms for a 3,000-trial ingest. ``PASSIVE`` never waits for or blocks
        a reader or writer; what it leaves undone the close still does. Joined by ``dispose``.
        """
        if self.in_memory or self.read_only or self._checkpoint is not None:
            return
        self._checkpoint = threading.Thread(
            target=self._run_checkpoint, name="benchledger-checkpoint", daemon=True
        )
        self._checkpoint.start()

    def _run_checkpoint(self) -> None:
        try:
            with self.connect() as conn:
                conn.raw.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        except sqlite3.Error:
            pass  # only an early start of what the close does anyway

    def dispose(self) -> None:
        if self._checkpoint is not None:
            self._checkpoint.join()
            self._checkpoint = None
        while self._idle:
            self._idle.pop().close()
        if self._memory is not None:
            self._memory.close()
            self._memory = None


def _use_wal(raw: sqlite3.Connection) -> None:
    """Put the file in WAL mode (it stays so), waiting as a writer would for a lock.

    Switching a new file to WAL needs a moment's exclusive lock, and SQLite answers "database is
    locked" at once instead of calling the busy handler, so processes that start on one new store
    together retry here; on a file already in WAL mode nothing is switched.
    """
    deadline = time.monotonic() + busy_timeout_seconds()
    delay = 0.002
    while True:
        try:
            if raw.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                raw.execute("PRAGMA journal_mode=WAL").fetchall()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.1)


def _connect(
    target: str, *, uri: bool = False, timeout: float = DEFAULT_BUSY_TIMEOUT_S
) -> sqlite3.Connection:
    # isolation_level=None: no implicit BEGIN/COMMIT from the module; check_same_thread off
    # because a rebuild's key scan runs on a second connection in a worker thread.
    return sqlite3.connect(
        target,
        uri=uri,
        timeout=timeout,
        isolation_level=None,
        check_same_thread=False,
    )


def busy_timeout_seconds() -> float:
    """How long a writer waits for another process's write lock (``BENCHLEDGER_BUSY_TIMEOUT``
    seconds, 30 by default)."""
    text = os.environ.get(BUSY_TIMEOUT_ENV)
    if not text:
        return DEFAULT_BUSY_TIMEOUT_S
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 86_400:
        raise InputError(f"{BUSY_TIMEOUT_ENV}={text!r} is not a number of seconds (0-86400)")
    return value


def _has_wal_frames(path: Path) -> bool:
    try:
        return Path(f"{path}-wal").stat().st_size > 0
    except OSError:
        return False


def explain(exc: sqlite3.Error, path: str) -> Exception:
    """The sentence a user can act on for the SQLite failures a user can cause; any other
    error is returned as it is (a bug, reported as an internal error)."""
    message = str(exc)
    name = path if path != MEMORY else "the in-memory store"
    if "file is not a database" in message:
        return InputError(
            f"{name} is not a SQLite database (or it is corrupt): point --db at a benchledger "
            "store, or at a file name that does not exist yet to create one"
        )
    if "locked" in message or "busy" in message:
        return InputError(
            f"the store {name} is locked: another benchledger process holds its write lock "
            f"and did not release it within {busy_timeout_seconds():g} s; retry when it "
            f"finishes, or wait longer with {BUSY_TIMEOUT_ENV}=SECONDS"
        )
    if "readonly" in message or "read-only" in message:
        return InputError(
            f"the store {name} is read-only for this user (the file or its directory cannot "
            "be written): nothing was recorded; read commands still work, write as a user "
            "who can write both"
        )
    if "unable to open" in message:
        return InputError(
            f"cannot open the store {name}: its directory is not writable and its "
            "write-ahead log (-wal) holds pages the file lacks; ask its owner to run any "
            "benchledger command there (which folds the log in), or read a copy"
        )
    full = "disk is full" in message or "database or disk" in message
    if not (full or "disk I/O error" in message):
        return exc
    disk, free = _disk_of(path)
    # A full disk shows as SQLITE_FULL when a page cannot be added, and as a plain I/O error
    # when the write-ahead log or its index cannot be created or grown: the free space tells.
    if full or (free is not None and free < 2 * PAGE_SIZE):
        return InputError(
            f"the disk holding the store {name} is full ({disk}): nothing was "
            "recorded; free space there (or in the temporary directory, TMPDIR) and run the "
            "command again"
        )
    return InputError(
        f"cannot read or write the store {name} ({disk}): {message}; nothing was recorded"
    )


def _disk_of(path: str) -> tuple[str, int | None]:
    """The filesystem holding ``path`` (its mount point and free space) for a message, and
    its free bytes (None when unknown)."""
    if path == MEMORY:
        return "memory", None
    here = Path(path).absolute().parent
    try:
        while not here.exists():
            here = here.parent
        device = here.stat().st_dev
        mount = here
        while mount.parent != mount and mount.parent.stat().st_dev == device:
            mount = mount.parent
        stats = os.statvfs(here)
        free = stats.f_bavail * stats.f_frsize
        return f"filesystem mounted at {mount}, {free // 1024} KiB free", free
    except OSError:
        return f"filesystem of {here}", None
