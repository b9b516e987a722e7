"""``benchledger sql``: one read-only statement, bounded in time, over a read-only connection.

The connection itself refuses writes (SQLite opened ``mode=ro``; PostgreSQL in a read-only
transaction that has already run a query, so ``SET TRANSACTION READ WRITE`` can no longer
lift it); the statement check only gives a clearer message first. On PostgreSQL the statement
also runs as the ``benchledger_reader`` role (migration 0003), which may read the documented
views and nothing else, so a superuser's connection cannot be used to call admin functions or
read server files; and it is sent as a prepared statement, which the server refuses to hold
more than one command, whatever quoting fooled the local check.

Every statement has a deadline, and each of its steps a bound. SQLite: a watchdog thread
interrupts the statement at the deadline or on a Ctrl-C (a progress handler alone runs only
between virtual-machine steps, and one step can grow a string for seconds), while
``SQLITE_LIMIT_LENGTH`` caps any one value and ``hard_heap_limit`` the memory SQLite may take.
PostgreSQL enforces ``statement_timeout`` and sends rows one at a time (single-row mode), so
the 1,000-row cap is applied before the rest of a large result reaches this process. On both,
the values fetched are counted and a result past ``MAX_RESULT_BYTES`` is refused.
"""

from __future__ import annotations

import math
import os
import re
import select
import signal
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
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
MAX_TIMEOUT_S = 86_400.0  # a day; also keeps PostgreSQL's statement_timeout (ms) an int4
# One value (string or blob) a SQLite statement may build or read, the memory SQLite may hold
# while it runs, and the bytes of values a result may bring into this process.
MAX_VALUE_BYTES = 64 * 1024 * 1024
HEAP_LIMIT_BYTES = 1024 * 1024 * 1024
MAX_RESULT_BYTES = 256 * 1024 * 1024
ROW_OVERHEAD, VALUE_OVERHEAD = 64, 32  # bytes Python spends on a row tuple and on each value
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


def check_timeout(timeout: float) -> float:
    """A finite number of seconds in (0, a day]: ``nan`` would switch every deadline
    comparison off, and PostgreSQL refuses a statement_timeout past an int4 of ms."""
    if not (isinstance(timeout, int | float) and math.isfinite(timeout)):
        raise InputError(f"--timeout must be a finite number of seconds, not {timeout!r}")
    if not 0 < timeout <= MAX_TIMEOUT_S:
        raise InputError(
            f"--timeout must be more than 0 and at most {MAX_TIMEOUT_S:g} seconds, not {timeout:g}"
        )
    return float(timeout)


def run_read_only_query(
    db: str | None, statement: str, *, limit: int = 1000, timeout: float = DEFAULT_TIMEOUT_S
) -> dict[str, Any]:
    """Run one checked read statement on the store at ``db`` (see the module docstring)."""
    timeout = check_timeout(timeout)
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
    timeout = check_timeout(timeout)
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
    previous_length = raw.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
    previous_heap = raw.execute(f"PRAGMA hard_heap_limit={_heap_limit()}").fetchone()[0]
    with _sigint_flag() as flagged, _watchdog(raw, deadline) as woken:

        def interrupted() -> bool:
            return flagged() or woken()

        def stop() -> int:
            return 1 if interrupted() or time.monotonic() > deadline else 0

        raw.set_progress_handler(stop, PROGRESS_STEPS)
        cursor = raw.cursor()
        try:
            if not raw.in_transaction:  # (an overlay's connection is already in its own)
                raw.execute("BEGIN")
            cursor.execute(statement)
            columns = [d[0] for d in cursor.description or ()]
            return columns, _bounded_rows(cursor, limit)
        except (sqlite3.Error, MemoryError) as exc:
            if interrupted():
                raise _interrupted() from None
            if time.monotonic() > deadline:
                raise _timed_out(timeout) from None
            if isinstance(exc, MemoryError):
                raise _too_much_memory() from None
            if isinstance(exc, sqlite3.DataError) or "too big" in str(exc):
                raise _value_too_big() from None
            raise InputError(f"query failed: {_first_line(exc)}") from None
        finally:
            cursor.close()
            raw.set_progress_handler(None, 0)
            raw.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, previous_length)
            raw.execute(f"PRAGMA hard_heap_limit={int(previous_heap)}").fetchall()


def _heap_limit() -> int:
    """SQLite's heap limit while the statement runs: HEAP_LIMIT_BYTES more than the process
    holds now. The limit is on all of SQLite's memory, and an ``--as-of`` overlay already
    holds its replayed pages in it: a fixed limit could refuse a query before it started.
    (The resident size bounds what SQLite holds; without /proc, the fixed budget.)"""
    try:
        with open("/proc/self/statm", "rb") as handle:
            resident_pages = int(handle.read().split()[1])
        return resident_pages * os.sysconf("SC_PAGE_SIZE") + HEAP_LIMIT_BYTES
    except (OSError, ValueError, IndexError):
        return HEAP_LIMIT_BYTES


@contextmanager
def _watchdog(raw: sqlite3.Connection, deadline: float) -> Iterator[Callable[[], bool]]:
    """Interrupt the running statement at ``deadline`` or as soon as a Ctrl-C arrives.

    SQLite holds the main thread inside one step for as long as the step takes, and Python
    runs a signal handler only between bytecodes, so neither the progress handler nor the
    SIGINT handler can stop a slow step; this thread can (``sqlite3_interrupt`` is the
    thread-safe way). A Ctrl-C reaches it through the signal wakeup file descriptor, which the
    C-level handler writes at once. Yields whether a Ctrl-C stopped the statement."""
    wake_r, wake_w = os.pipe()
    done_r, done_w = os.pipe()
    os.set_blocking(wake_w, False)
    lock = threading.Lock()
    sigint = threading.Event()
    finished = False
    previous_fd: int | None = None
    if threading.current_thread() is threading.main_thread():
        previous_fd = signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)

    def watch() -> None:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            ready, _, _ = select.select([wake_r, done_r], [], [], remaining)
            if done_r in ready:
                return
            if wake_r in ready and signal.SIGINT in os.read(wake_r, 64):
                sigint.set()
                break
        with lock:
            if not finished:
                raw.interrupt()

    thread = threading.Thread(target=watch, name="benchledger-sql-watchdog", daemon=True)
    thread.start()
    try:
        yield sigint.is_set
    finally:
        with lock:
            finished = True
        os.write(done_w, b"x")
        thread.join()
        if previous_fd is not None:
            signal.set_wakeup_fd(previous_fd)
        for fd in (wake_r, wake_w, done_r, done_w):
            os.close(fd)


def _bounded_rows(rows: Iterable[Any], limit: int) -> list[Any]:
    """Up to ``limit + 1`` rows (one more says "truncated"), refused past MAX_RESULT_BYTES."""
    kept: list[Any] = []
    size = 0
    for row in rows:
        # a row's own cost in this process (a tuple, a number object per value) counts too:
        # a generous --limit over millions of narrow rows is as large as a few wide ones
        size += ROW_OVERHEAD + VALUE_OVERHEAD * len(row)
        size += sum(len(v) for v in row if isinstance(v, str | bytes | memoryview))
        if size > MAX_RESULT_BYTES:
            raise InputError(
                f"query result is larger than {MAX_RESULT_BYTES // 2**20} MiB: select fewer "
                "rows or smaller columns (substr, length)"
            )
        kept.append(row)
        if len(kept) > limit:
            break
    return kept


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
        # The statement as typed (no parameter markers rewritten), sent with the extended
        # protocol (one command only) in single-row mode: closing the stream after the
        # ``limit + 1``-th row cancels the rest on the server instead of fetching it.
        stream = cursor.stream(statement)
        try:
            first = next(stream, None)
            if first is None:
                return _described_columns(cursor), []
            columns = [d[0] for d in cursor.description or ()]
            rows = _bounded_rows(_chain(first, stream), limit)
        finally:
            stream.close()
        return columns, rows
    except KeyboardInterrupt:  # psycopg has already cancelled the query on the server
        raise _interrupted() from None
    except MemoryError:
        raise _too_much_memory() from None
    except conn.errors as exc:
        if getattr(exc, "sqlstate", None) == "57014":  # query_canceled: the statement_timeout
            raise _timed_out(timeout) from None
        raise InputError(f"query failed: {_first_line(exc)}") from None
    finally:
        cursor.close()


def _described_columns(cursor: Any) -> list[str]:
    """The columns of a result without rows: single-row mode describes columns only with a
    row, so the statement just run (the unnamed prepared one) is described instead."""
    connection = cursor.connection
    described = connection.pgconn.describe_prepared(b"")
    encoding = connection.info.encoding
    return [described.fname(i).decode(encoding) for i in range(described.nfields)]


def _chain(first: Any, rest: Iterator[Any]) -> Iterator[Any]:
    yield first
    yield from rest


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


def _too_much_memory() -> InputError:
    return InputError(
        "query needs more memory than benchledger sql allows: select fewer rows or smaller "
        "columns (substr, length), or aggregate"
    )


def _value_too_big() -> InputError:
    return InputError(
        f"query builds or reads a value larger than {MAX_VALUE_BYTES // 2**20} MiB: select a "
        "part of it (substr) or its length"
    )


def _first_line(exc: Exception) -> str:
    orig = getattr(exc, "orig", None) or exc
    return (str(orig).strip().splitlines() or ["unknown error"])[0]
