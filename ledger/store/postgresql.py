"""The scale-out store: PostgreSQL through a SQLAlchemy engine (psycopg 3, pooled).

The same wrapper also serves Alembic's connection while a migration runs (revision 0002
fills the render cache with the projection's own functions), whatever the database. SQL
reaches the driver as written, with ``?``/``:name`` turned into the driver's style once per
statement text (``ledger.store.connection.to_pyformat``); no per-row SQLAlchemy processing.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.store.connection import Params, to_pyformat
from benchledger.ledger.store.sqlite import BUSY_TIMEOUT_ENV, busy_timeout_seconds
from benchledger.ledger.store.url_display import display_url, scrub_url_secrets

# SQLSTATEs a user can cause and act on, said in one line instead of an internal error.
LOCK_NOT_AVAILABLE = "55P03"  # lock_timeout: another session holds the lock too long
INSUFFICIENT_RESOURCES = "53"  # class 53: disk full (53100), out of memory, too many connections
INVALID_SCHEMA_NAME = "3F000"


class SqlAlchemyConnection:
    """A SQLAlchemy ``Connection`` seen through ``ledger.store.connection.Connection``."""

    in_memory = False

    def __init__(self, conn: Any) -> None:
        from sqlalchemy.exc import DBAPIError, StatementError

        self.sa = conn
        self.dialect = conn.dialect.name
        self._pyformat = conn.dialect.paramstyle in ("pyformat", "format")
        driver = getattr(conn.dialect, "loaded_dbapi", None) or conn.dialect.dbapi
        # the driver's own errors too: ``benchledger sql`` runs its statement on the raw cursor
        self.errors: tuple[type[Exception], ...] = (DBAPIError, StatementError, driver.Error)

    def _sql(self, sql: str, has_params: bool) -> str:
        return to_pyformat(sql, has_params=has_params) if self._pyformat else sql

    def execute(self, sql: str, params: Params = ()) -> Any:
        try:
            if not params:
                return self.sa.exec_driver_sql(self._sql(sql, False))
            return self.sa.exec_driver_sql(self._sql(sql, True), _one(params))
        except self.errors as exc:
            _raise_explained(exc, self.sa)
            raise

    def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        if rows:
            try:
                self.sa.exec_driver_sql(self._sql(sql, True), [_one(r) for r in rows])
            except self.errors as exc:
                _raise_explained(exc, self.sa)
                raise

    def stream(
        self, sql: str, params: Params = (), *, batch: int = 1000
    ) -> Generator[Any, None, None]:
        options = {"stream_results": True, "max_row_buffer": batch}
        text = self._sql(sql, bool(params))
        result = self.sa.exec_driver_sql(
            text, _one(params) if params else None, execution_options=options
        )
        try:
            yield from result
        finally:
            result.close()

    def dbapi_connection(self) -> Any:
        return self.sa.connection.dbapi_connection

    def commit(self) -> None:
        try:
            self.sa.commit()
        except self.errors as exc:
            _raise_explained(exc, self.sa)
            raise

    def rollback(self) -> None:
        self.sa.rollback()


def sqlstate(exc: BaseException) -> str:
    """The server's SQLSTATE of a driver error (wrapped by SQLAlchemy or not), or ''."""
    orig = getattr(exc, "orig", None) or exc
    return getattr(orig, "sqlstate", None) or ""


def explain(exc: Exception, conn: Any = None) -> Exception:
    """The sentence a user can act on for the server errors a user causes (a stuck lock
    holder, a full disk, a missing schema); any other error is returned as it is."""
    state = sqlstate(exc)
    reason = (str(getattr(exc, "orig", None) or exc).strip().splitlines() or ["no answer"])[0]
    where = "the store"
    if conn is not None:
        try:
            where = f"the store {display_url(conn.engine.url.render_as_string())}"
        except Exception:  # noqa: BLE001 - only decorates the message
            pass
    if state == LOCK_NOT_AVAILABLE:
        return InputError(
            f"{where} is locked: another session holds a lock this command needs and did not "
            f"release it within {busy_timeout_seconds():g} s; nothing was recorded; retry when "
            f"it finishes, or wait longer with {BUSY_TIMEOUT_ENV}=SECONDS"
        )
    if state.startswith(INSUFFICIENT_RESOURCES):
        return InputError(
            f"the database server of {where} is out of resources ({reason}): nothing was "
            "recorded; free disk space or memory on the server, then run the command again"
        )
    if state == INVALID_SCHEMA_NAME:
        return InputError(
            f"{where}: {reason}; create the schema first (CREATE SCHEMA name) or fix the "
            "URL's options=-csearch_path=..."
        )
    return exc


def _raise_explained(exc: Exception, conn: Any) -> None:
    """Raise ``explain``'s sentence when it has one; return (the caller re-raises) if not."""
    mapped = explain(exc, conn)
    if mapped is not exc:
        raise mapped from None


def _one(params: Params) -> Any:
    """One parameter set as SQLAlchemy reads it: a list would be taken for many."""
    return params if isinstance(params, tuple | dict) else tuple(params)


class SqlAlchemyDatabase:
    """A pooled engine; ``read_only`` opens every session in a read-only transaction mode."""

    in_memory = False

    def __init__(self, url: str, *, read_only: bool = False) -> None:
        from sqlalchemy import create_engine
        from sqlalchemy.engine import make_url
        from sqlalchemy.exc import ArgumentError, NoSuchModuleError

        try:
            existing = make_url(url).query.get("options") or ""
        except (ArgumentError, ValueError):
            raise InputError(
                f"--db {display_url(url)} is not a valid store URL: write "
                "postgresql://USER@HOST:PORT/DATABASE"
            ) from None
        if isinstance(existing, tuple):
            existing = " ".join(existing)
        # A writer waits for another's lock as long as on SQLite (BENCHLEDGER_BUSY_TIMEOUT),
        # then fails with one line (``explain``) instead of waiting forever on a stuck holder.
        lock_ms = max(1, round(busy_timeout_seconds() * 1000))
        options = f"{existing} -c lock_timeout={lock_ms}"
        if read_only:
            options += " -c default_transaction_read_only=on"
        self.url = url
        try:
            self.engine = create_engine(
                url, pool_pre_ping=False, connect_args={"options": options.strip()}
            )
        except (ArgumentError, NoSuchModuleError, ImportError, ValueError) as exc:
            raise InputError(
                f"--db {display_url(url)} cannot be opened ({type(exc).__name__}): write "
                "postgresql://USER@HOST:PORT/DATABASE"
            ) from None
        self.dialect = self.engine.dialect.name

    @contextmanager
    def connect(self) -> Iterator[SqlAlchemyConnection]:
        with self._connected() as conn:
            yield SqlAlchemyConnection(conn)

    @contextmanager
    def begin(self, *, temp_in_memory: bool = False) -> Iterator[SqlAlchemyConnection]:
        # ``temp_in_memory`` is SQLite's (``SqliteDatabase.begin``); PostgreSQL has no such file.
        with self._connected() as conn, conn.begin():
            yield SqlAlchemyConnection(conn)

    def _connected(self) -> Any:
        """A pooled connection; a server that cannot be reached is one sentence, not a trace."""
        from sqlalchemy.exc import DBAPIError

        try:
            return self.engine.connect()
        except DBAPIError as exc:  # unreachable, refused, or a connection option libpq rejects
            reason = (str(exc.orig).strip().splitlines() or ["no answer"])[0]
            reason = scrub_url_secrets(reason, self.url)
            raise InputError(
                f"cannot connect to the store {display_url(self.url)}: "
                f"{reason}; check the URL and that the server is running"
            ) from None

    def sqlalchemy_engine(self) -> Any:
        return self.engine

    def checkpoint_soon(self) -> None:
        """Nothing to do: PostgreSQL checkpoints on its own."""

    def dispose(self) -> None:
        self.engine.dispose()
