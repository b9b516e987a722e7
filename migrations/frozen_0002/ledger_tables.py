"""The store's own tables as the SQL here needs them: names, columns, primary keys.

``ledger/schema.py`` and ``projections/schema.py`` hold the full SQLAlchemy models that
Alembic revisions are checked against; these plain specs carry only what statements are
built from, so a command never imports SQLAlchemy to name a column.
``tests/test_table_specs.py`` keeps the two equal.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from migrations.frozen_0002.ledger_connection import quote


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
        names = ", ".join(quote(c) for c in self.columns)
        updates = ", ".join(
            f"{quote(c)} = excluded.{quote(c)}" for c in self.columns if c not in self.primary_key
        )
        keys = ", ".join(quote(c) for c in self.primary_key)
        values = ", ".join("?" * len(self.columns))
        return (
            f"INSERT INTO {self.name} ({names}) VALUES ({values}) "
            f"ON CONFLICT ({keys}) DO UPDATE SET {updates}"
        )

    @cached_property
    def select_sql(self) -> str:
        """Every column, in declaration order."""
        return f"SELECT {', '.join(quote(c) for c in self.columns)} FROM {self.name}"


EVENTS = TableSpec(
    "events",
    (
        "position",
        "event_id",
        "stream",
        "stream_version",
        "event_type",
        "schema_version",
        "payload",
        "metadata",
        "correlation_id",
        "recorded_at",
        "idempotency_key",
        "prev_hash",
        "hash",
    ),
    ("position",),
)
PROJECTION_CHECKPOINTS = TableSpec("projection_checkpoints", ("name", "position"), ("name",))
