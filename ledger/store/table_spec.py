"""A table as the SQL here needs it: its name, columns and primary key, and the statements
built from them.

The specs themselves (``ledger/store/tables.py``, ``projections/read_models/tables.py``) are
generated from the
SQLAlchemy models by ``python -m migrations.snapshot``, so a column is declared once, in the
models, and a command still never imports SQLAlchemy to name one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from benchledger.ledger.store.connection import quote


@dataclass(frozen=True)
class TableSpec:
    """One table: its name, its columns in declaration order and its primary key."""

    name: str
    columns: tuple[str, ...]
    primary_key: tuple[str, ...]

    @cached_property
    def upsert_sql(self) -> str:
        """Insert-or-replace by primary key, values in ``columns`` order (``?`` each): the
        same text on SQLite (3.24+) and PostgreSQL."""
        values = ", ".join("?" * len(self.columns))
        return f"{self.insert_into()} VALUES ({values}) {self.on_conflict()}"

    @cached_property
    def upsert_from_json_sql(self) -> str:
        """PostgreSQL: ``upsert_sql`` for many rows at once, given as one JSON array of objects
        keyed by column (one ``?``); the server converts each value to its column's type."""
        names = ", ".join(quote(c) for c in self.columns)
        return (
            f"{self.insert_into()} SELECT {names}"
            f" FROM json_populate_recordset(NULL::{self.name}, ?::json) {self.on_conflict()}"
        )

    def insert_into(self, columns: Sequence[str] | None = None) -> str:
        """``INSERT INTO`` the table's ``columns`` (all of them by default)."""
        names = ", ".join(quote(c) for c in (columns or self.columns))
        return f"INSERT INTO {self.name} ({names})"

    def on_conflict(self, columns: Sequence[str] | None = None) -> str:
        """``ON CONFLICT`` on the primary key: the other ``columns`` take the new values."""
        updates = ", ".join(
            f"{quote(c)} = excluded.{quote(c)}"
            for c in (columns or self.columns)
            if c not in self.primary_key
        )
        keys = ", ".join(quote(c) for c in self.primary_key)
        return f"ON CONFLICT ({keys}) DO UPDATE SET {updates}"

    @cached_property
    def select_sql(self) -> str:
        """Every column, in declaration order."""
        return f"SELECT {', '.join(quote(c) for c in self.columns)} FROM {self.name}"
