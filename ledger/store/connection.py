"""What the rest of benchledger sees of a database: SQL text and plain row tuples.

Every statement is written once, in the SQL both SQLite and PostgreSQL accept, with ``?``
(positional) or ``:name`` (named) parameters. Two implementations carry it out, one module per
database as in the ``eventsourcing`` library: ``ledger/store/sqlite.py`` over the standard
library's ``sqlite3`` (the embedded default) and ``ledger/store/postgresql.py`` over a SQLAlchemy
engine (PostgreSQL, and Alembic's connections during a migration).

Why not SQLAlchemy Core everywhere: importing it costs 0.1-0.4 s, most of a small command
on SQLite, and every statement here is a handful of hand-written SQL anyway.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

Params = Sequence[Any] | Mapping[str, Any]


class Result(Protocol):
    """Rows of one statement (the subset of a SQLAlchemy ``CursorResult`` used here)."""

    @property
    def rowcount(self) -> int:
        """Rows the statement changed (read-only, as a cursor's is)."""
        ...

    def __iter__(self) -> Iterator[Sequence[Any]]: ...

    def all(self) -> list[Sequence[Any]]: ...

    def first(self) -> Sequence[Any] | None: ...

    def scalar(self) -> Any: ...


class Connection(Protocol):
    """One connection; the first statement opens a transaction that lasts until ``commit``,
    ``rollback`` or the end of the ``connect()`` block (which rolls back), so the reads of
    one command see one snapshot, as a SQLAlchemy connection does."""

    dialect: str  # "sqlite" or "postgresql"
    in_memory: bool  # a private in-memory SQLite database: no second connection sees it
    errors: tuple[type[Exception], ...]  # what a failed statement raises

    def execute(self, sql: str, params: Params = ()) -> Result: ...

    def executemany(self, sql: str, rows: Sequence[Params]) -> None: ...

    def stream(
        self, sql: str, params: Params = (), *, batch: int = 1000
    ) -> Generator[Any, None, None]:
        """Rows fetched ``batch`` at a time (a server-side cursor on PostgreSQL)."""
        ...

    def dbapi_connection(self) -> Any: ...

    def commit(self) -> None: ...

    def rollback(self) -> None: ...


class Database(Protocol):
    """A store's database: opens connections and write transactions."""

    dialect: str
    url: str
    in_memory: bool

    def connect(self) -> AbstractContextManager[Connection]: ...

    def begin(self, *, temp_in_memory: bool = False) -> AbstractContextManager[Connection]:
        """A write transaction, committed when the block ends without an exception (on
        SQLite ``BEGIN IMMEDIATE``: a writer queues for the lock instead of failing later).
        ``temp_in_memory``: the transaction's temporary files stay in memory (SQLite only)."""
        ...

    def sqlalchemy_engine(self) -> Any:
        """A SQLAlchemy engine on the same database, for Alembic (imported only then)."""
        ...

    def checkpoint_soon(self) -> None:
        """Start moving committed work into the main database file in the background (SQLite's
        WAL checkpoint), so the process does not wait for it when it closes."""
        ...

    def dispose(self) -> None: ...


# The second key of a store's PostgreSQL advisory locks: its schema. ``coalesce``: with no
# schema on the search path ``current_schema()`` is NULL, and the lock functions are strict (a
# NULL key takes no lock at all).
PG_SCHEMA_KEY = "hashtext(coalesce(current_schema(), ''))"


def scalars(result: Result) -> list[Any]:
    """The first column of every row."""
    return [row[0] for row in result]


def placeholders(count: int) -> str:
    """``?, ?, ?`` for an ``IN (...)`` list of ``count`` values."""
    return ", ".join("?" * count)


def quote(name: str) -> str:
    """An identifier quoted for both databases (``row`` and ``position`` are keywords)."""
    return '"' + name.replace('"', '""') + '"'


# Quoted strings and identifiers keep their ``?`` and ``:name``; ``::`` is a PostgreSQL cast.
_TOKENS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|::|\?|:(\w+)|%")
_PYFORMAT: dict[tuple[str, bool], str] = {}
_PYFORMAT_MAX = 512  # ``IN (?, ...)`` lists make texts of every length: keep the cache bounded


def to_pyformat(sql: str, *, has_params: bool) -> str:
    """``?``/``:name`` SQL in psycopg's ``%s``/``%(name)s`` style (cached per text).

    ``%`` is doubled only when parameters are passed: with none, the driver leaves the text
    alone and ``%%`` would reach the server as two characters.
    """
    key = (sql, has_params)
    found = _PYFORMAT.get(key)
    if found is None:
        if len(_PYFORMAT) >= _PYFORMAT_MAX:
            _PYFORMAT.clear()
        found = _PYFORMAT[key] = _TOKENS.sub(lambda m: _token(m, has_params), sql)
    return found


def _token(match: re.Match[str], has_params: bool) -> str:
    text = match.group(0)
    if text[0] in "'\"":  # markers inside quotes are text; psycopg still reads every ``%``
        return text.replace("%", "%%") if has_params else text
    if text == "?":
        return "%s"
    if text == "%":
        return "%%" if has_params else "%"
    if match.group(1) is not None:
        return f"%({match.group(1)})s"
    return text
