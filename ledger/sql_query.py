"""``benchledger sql``: one read-only statement over a read-only connection.

The connection itself refuses writes (SQLite opened ``mode=ro``; PostgreSQL in a read-only
transaction that has already run a query, so ``SET TRANSACTION READ WRITE`` can no longer
lift it); the statement check only gives a clearer message first.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ledger.errors import InputError

if TYPE_CHECKING:
    from ledger.connection import Database

READ_KEYWORDS = {"select", "with", "explain", "values", "table", "show"}
_LEADING = re.compile(r"^\s*(?:--[^\n]*\n\s*|/\*.*?\*/\s*)*([A-Za-z]+)", re.S)


def run_read_only_query(db: str | None, statement: str, *, limit: int = 1000) -> dict[str, Any]:
    from ledger.database import open_database, resolve_location

    statement = checked_statement(statement)
    database = open_database(resolve_location(db), read_only=True)
    try:
        return query_database(database, statement, limit=limit)
    finally:
        database.dispose()


def checked_statement(statement: str) -> str:
    """The statement without its trailing semicolon, refused unless it is one read."""
    statement = statement.strip().rstrip(";").strip()
    _refuse_writes(statement)
    return statement


def query_database(database: Database, statement: str, *, limit: int = 1000) -> dict[str, Any]:
    """Run a checked statement on a database opened read-only; the first ``limit`` rows."""
    with database.connect() as conn:
        conn.execute("SELECT 1")
        cursor = conn.dbapi_connection().cursor()
        try:
            # the statement as typed: no parameter markers are rewritten in it
            cursor.execute(statement)
            columns = [d[0] for d in cursor.description or ()]
            rows = cursor.fetchmany(limit + 1)
        except conn.errors as exc:
            raise InputError(f"query failed: {_first_line(exc)}") from None
        finally:
            cursor.close()
    truncated = len(rows) > limit
    rows = [list(r) for r in rows[:limit]]
    return {"columns": columns, "rows": rows, "row_count": len(rows), "truncated": truncated}


def _refuse_writes(statement: str) -> None:
    if not statement:
        raise InputError("empty SQL statement")
    if ";" in statement:
        raise InputError("benchledger sql runs one statement at a time")
    match = _LEADING.match(statement)
    keyword = match.group(1).lower() if match else ""
    if keyword not in READ_KEYWORDS:
        raise InputError(
            f"benchledger sql is read-only: {keyword.upper() or 'this'} statements are refused"
        )


def _first_line(exc: Exception) -> str:
    orig = getattr(exc, "orig", None) or exc
    return (str(orig).strip().splitlines() or ["unknown error"])[0]
