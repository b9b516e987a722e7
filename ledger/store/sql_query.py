"""``benchledger sql``: one read-only statement, bounded in time, over a read-only connection.

The connection itself refuses writes (SQLite opened ``mode=ro``; PostgreSQL in a read-only
transaction that has already run a query, so ``SET TRANSACTION READ WRITE`` can no longer
lift it); the statement check only gives a clearer message first. On PostgreSQL the statement
also runs as the ``benchledger_reader`` role (migration 0003), which may read the documented
views and nothing else, so a superuser's connection cannot be used to call admin functions or
read server files; and it is sent as a prepared statement, which the server refuses to hold
more than one command, whatever quoting fooled the local check.

Every statement has a deadline: SQLite checks it (and a Ctrl-C) from a progress handler,
PostgreSQL enforces ``statement_timeout``.
"""

from __future__ import annotations

import re
import signal
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.store.database import (
    current_revision,
    ensure_schema,
    open_database,
    resolve_location,
)

READ_KEYWORDS = {"select", "with", "explain", "values", "table", "show"}
DEFAULT_TIMEOUT_S = 5.0
READER_ROLE = "benchledger_reader"  # created by migrations/versions/0003_store_integrity.py
# SQLite calls the progress handler every this many virtual-machine steps (well under 1 ms).
PROGRESS_STEPS = 5000
_LEADING = re.compile(r"^\s*(?:--[^\n]*\n\s*|/\*.*?\*/\s*)*([A-Za-z]+)", re.S)
_ONLY_COMMENTS = re.compile(r"^(?:\s|;|--[^\n]*(?:\n|$)|/\*.*?\*/)*$", re.S)
# ``set_config('role', ...)`` is ``SET ROLE`` as a function: it would let a superuser's session
# leave the reader role. Unicode-escaped identifiers (``U&"..."``) could spell it in disguise.
_PG_REFUSED = re.compile(r"set_config|u&[\"']", re.I)


class QueryInterrupted(InputError):
    """Ctrl-C while a query ran: exit 130 like any interrupted command."""

    exit_code = 130
    code = "interrupted"


def run_read_only_query(
    db: str | None, statement: str, *, limit: int = 1000, timeout: float = DEFAULT_TIMEOUT_S
) -> dict[str, Any]:

    statement = single_statement(statement)
    _refuse_writes(statement)
    location = resolve_location(db)
    database = open_database(location, read_only=True)
    try:
        if current_revision(database) is None:
            raise InputError("no benchledger store here yet: run a command with --execute first")
        ensure_schema(database, location, auto_upgrade=False)
        with database.connect() as conn:
            if database.dialect == "sqlite":
                columns, rows = _run_sqlite(conn.dbapi_connection(), statement, limit, timeout)
            else:
                columns, rows = _run_postgres(conn, statement, limit, timeout)
    finally:
        database.dispose()
    return _result(columns, rows, limit)


def checked_statement(text: str) -> str:
    """One read statement, as ``run_read_only_query`` accepts it (refused otherwise)."""
    statement = single_statement(text)
    _refuse_writes(statement)
    return statement


def query_sqlite(
    database: Any, statement: str, *, limit: int = 1000, timeout: float = DEFAULT_TIMEOUT_S
) -> dict[str, Any]:
    """A checked statement on a SQLite database opened read-only (``sql --as-of``'s scratch
    store), with the same timeout and Ctrl-C handling."""
    with database.connect() as conn:
        columns, rows = _run_sqlite(conn.dbapi_connection(), statement, limit, timeout)
    return _result(columns, rows, limit)


def _result(columns: list[str], rows: list[Any], limit: int) -> dict[str, Any]:
    truncated = len(rows) > limit
    rows = [list(r) for r in rows[:limit]]
    return {"columns": columns, "rows": rows, "row_count": len(rows), "truncated": truncated}


def single_statement(text: str) -> str:
    """The one statement in ``text`` without its terminator; refuses a second statement.

    A ``;`` ends a statement only where SQLite's own tokenizer says the text before it is
    complete (``sqlite3.complete_statement``), so semicolons inside strings, quoted names and
    comments (``SELECT ';'``) are text.
    """
    for index, char in enumerate(text):
        if char == ";" and sqlite3.complete_statement(text[: index + 1]):
            if not _ONLY_COMMENTS.match(text[index + 1 :]):
                raise InputError("benchledger sql runs one statement at a time")
            text = text[:index]
            break
    text = text.strip()
    if not text or _ONLY_COMMENTS.match(text):
        raise InputError("empty SQL statement")
    return text


def _refuse_writes(statement: str) -> None:
    match = _LEADING.match(statement)
    keyword = match.group(1).lower() if match else ""
    if keyword not in READ_KEYWORDS:
        raise InputError(
            f"benchledger sql is read-only: {keyword.upper() or 'this'} statements are refused"
        )


def _run_sqlite(
    raw: sqlite3.Connection, statement: str, limit: int, timeout: float
) -> tuple[list[str], list[Any]]:
    deadline = time.monotonic() + timeout
    with _sigint_flag() as interrupted:

        def stop() -> int:
            return 1 if interrupted() or time.monotonic() > deadline else 0

        raw.set_progress_handler(stop, PROGRESS_STEPS)
        cursor = raw.cursor()
        try:
            if not raw.in_transaction:  # (an overlay's connection is already in its own)
                raw.execute("BEGIN")
            cursor.execute(statement)
            columns = [d[0] for d in cursor.description or ()]
            return columns, cursor.fetchmany(limit + 1)
        except sqlite3.Error as exc:
            if interrupted():
                raise _interrupted() from None
            if time.monotonic() > deadline:
                raise _timed_out(timeout) from None
            raise InputError(f"query failed: {_first_line(exc)}") from None
        finally:
            cursor.close()
            raw.set_progress_handler(None, 0)


def _run_postgres(
    conn: Any, statement: str, limit: int, timeout: float
) -> tuple[list[str], list[Any]]:
    if _PG_REFUSED.search(statement):
        raise InputError(
            "benchledger sql refuses set_config and U& escapes on PostgreSQL: they could "
            "leave the read-only reader role"
        )
    conn.execute("SELECT 1")  # the read-only transaction is now fixed
    conn.execute(f"SET LOCAL statement_timeout = {max(1, round(timeout * 1000))}")
    _become_reader(conn)
    cursor = conn.dbapi_connection().cursor()
    try:
        # the statement as typed (no parameter markers rewritten), prepared: one command only
        cursor.execute(statement, prepare=True)
        columns = [d[0] for d in cursor.description or ()]
        return columns, cursor.fetchmany(limit + 1)
    except KeyboardInterrupt:  # psycopg has already cancelled the query on the server
        raise _interrupted() from None
    except conn.errors as exc:
        if getattr(exc, "sqlstate", None) == "57014":  # query_canceled: the statement_timeout
            raise _timed_out(timeout) from None
        raise InputError(f"query failed: {_first_line(exc)}") from None
    finally:
        cursor.close()


def _become_reader(conn: Any) -> None:
    try:
        conn.execute(f"SET LOCAL ROLE {READER_ROLE}")
    except conn.errors:
        raise InputError(
            f"benchledger sql cannot switch to the {READER_ROLE} role that may only read the "
            "views: run `benchledger db upgrade` as a user allowed to create roles, or grant "
            f"{READER_ROLE} to this user"
        ) from None


@contextmanager
def _sigint_flag() -> Iterator[Callable[[], bool]]:
    """A Ctrl-C sets a flag the progress handler reads: SQLite ignores Python's own
    KeyboardInterrupt while it runs a statement, so the handler is what stops it."""
    hit = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield hit.is_set
        return
    previous = signal.signal(signal.SIGINT, lambda *_: hit.set())
    try:
        yield hit.is_set
    finally:
        signal.signal(signal.SIGINT, previous)


def _interrupted() -> QueryInterrupted:
    return QueryInterrupted("interrupted: the query was stopped (Ctrl-C); nothing was changed")


def _timed_out(timeout: float) -> InputError:
    return InputError(
        f"query stopped after {timeout:g} s: narrow it (WHERE, LIMIT) or allow longer with "
        "--timeout SECONDS"
    )


def _first_line(exc: Exception) -> str:
    orig = getattr(exc, "orig", None) or exc
    return (str(orig).strip().splitlines() or ["unknown error"])[0]
