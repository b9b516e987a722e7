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

from benchledger.ledger.store.connection import Params, to_pyformat


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
        if not params:
            return self.sa.exec_driver_sql(self._sql(sql, False))
        return self.sa.exec_driver_sql(self._sql(sql, True), _one(params))

    def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        if rows:
            self.sa.exec_driver_sql(self._sql(sql, True), [_one(r) for r in rows])

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
        self.sa.commit()

    def rollback(self) -> None:
        self.sa.rollback()


def _one(params: Params) -> Any:
    """One parameter set as SQLAlchemy reads it: a list would be taken for many."""
    return params if isinstance(params, tuple | dict) else tuple(params)


class SqlAlchemyDatabase:
    """A pooled engine; ``read_only`` opens every session in a read-only transaction mode."""

    in_memory = False

    def __init__(self, url: str, *, read_only: bool = False) -> None:
        from sqlalchemy import create_engine
        from sqlalchemy.engine import make_url

        connect_args = {}
        if read_only:
            existing = make_url(url).query.get("options") or ""
            if isinstance(existing, tuple):
                existing = " ".join(existing)
            connect_args["options"] = f"{existing} -c default_transaction_read_only=on".strip()
        self.url = url
        self.engine = create_engine(url, pool_pre_ping=False, connect_args=connect_args)
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
        from sqlalchemy.exc import OperationalError

        try:
            return self.engine.connect()
        except OperationalError as exc:
            from benchledger.ledger.core.errors import InputError
            from benchledger.ledger.store.url_display import display_url, scrub_url_secrets

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
