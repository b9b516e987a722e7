"""Replay done by the database: a read model whose events each set whole rows by key is rebuilt
by ``INSERT ... SELECT`` over the events table, not by decoding every payload in Python.

Why: on a realistic log most runs are ingested once, so nearly every event changes a row and
the sparse replay skips little; decoding ~2 KB of JSON per event, building dicts and binding
them back into SQL was most of a rebuild's time (bench/README.md, issue 18). SQLite's JSON
functions read the few keys a read model keeps where the payload lies, in C.

Exactness. The stored payload is canonical JSON (orjson, sorted keys, compact: the hash chain
holds it to that form), so a sub-object SQLite extracts is, byte for byte, the canonical text
the Python path would write. A fold states when its SQL gives exactly what the projection's
``apply`` gives (``clean``: the JSON types the event contracts promise); any other event —
outside those types, carrying several rows, needed for a per-ledger row, or of a type with an
upcaster — is a *leftover*, applied by the projection's own Python code. Leftovers are applied
first, into the empty tables, and the SQL never writes from those events; it then writes a
row only over an older one (``excluded.position > position``, newest event first; within one
event, the later list entry first). Every row a fold writes is wholly decided by one event, so
the tables end exactly as a replay in position order leaves them. ``rebuild --verify``
replays in Python into a scratch database and compares every row, so the two paths keep
checking each other.

On SQLite only: a rebuild of the live read models (the events are in the same database),
and a replay from position 1 into a scratch database for ``--as-of`` or a snapshot, with the
live file attached (``events`` names its table; the scratch keeps texts itself:
``Fold.self_contained``). ``rebuild --verify`` and replays onto a snapshot replay in Python.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from benchledger.ledger.store.event_rows import sparse_query
from benchledger.ledger.store.events import CURRENT_SCHEMA_VERSION

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Connection
    from benchledger.ledger.store.table_spec import TableSpec
_LEFTOVER_CHUNK = 500  # positions per ``IN (...)`` when reading leftovers


def text(path: str, source: str = "e.payload") -> str:
    """SQL: the value at ``path`` (a JSON string comes back as SQL text)."""
    return f"json_extract({source}, '{path}')"


def is_text(path: str, source: str = "e.payload") -> str:
    """SQL: the value at ``path`` is a JSON string (0 or 1, never NULL)."""
    return f"json_type({source}, '{path}') IS 'text'"


def text_or_null(path: str, source: str = "e.payload") -> str:
    """SQL: the value at ``path`` is a JSON string, null or absent (``dict.get`` gives a str or
    None, so Python's ``value or fallback`` and SQL's ``nullif(value, '')`` agree)."""
    return f"coalesce(json_type({source}, '{path}'), 'null') IN ('text', 'null')"


def or_else(path: str, fallback: str, source: str = "e.payload") -> str:
    """SQL for Python's ``payload.get(key) or fallback`` on a string-or-null value."""
    return f"coalesce(nullif({text(path, source)}, ''), {fallback})"


@dataclass(frozen=True)
class Fold:
    """How the events of one type set rows of one table, in SQL.

    ``columns``: each column of ``table`` it writes, as SQL over the event row ``e`` (and the
    ``each`` row ``f`` if any); the others keep their defaults. ``clean``: SQL, true when the
    SQL gives what the projection's ``apply`` would for that event (or ``each`` row).
    ``where``: the events (or ``each`` rows) that write a row at all. ``each``: a table-valued
    source left-joined per event when one event writes several rows (``json_each``; an event
    without any still has its ``clean`` checked), ordered by its ``key`` after the position.
    """

    table: TableSpec
    event_type: str
    columns: dict[str, str]
    clean: str
    where: str = "1"
    each: str | None = None
    # Columns written otherwise when the tables go where no events are (a scratch database
    # for ``--as-of``): the text itself instead of a reference to the event.
    self_contained: dict[str, str] = field(default_factory=dict)

    def insert_sql(self, events: str = "events", *, self_contained: bool = False) -> str:
        """The guarded ``INSERT ... SELECT``. Parameters: the last position replayed, a JSON
        array of positions left to Python, and twice a JSON array of the only positions worth
        reading (NULL: all; see ``DatabasePlan.only``). ``events``: the table the events are
        read from (``live.events`` when the live store is attached to a scratch database).
        An event that is not ``clean`` is passed to ``LEFTOVER_FUNCTION`` and written by
        Python instead (``replay_projection``).

        Newest first: the first row written for a key is its last one, and each older row
        meets the guard and is dropped without a write, so a log that rewrites the same runs
        over and over costs an index probe per superseded row, not an update. Within one
        event, the later list entry comes first and wins the same way."""
        columns = {**self.columns, **self.self_contained} if self_contained else self.columns
        values = ", ".join(columns.values())
        source = f"{events} AS e"
        where = self.where
        order = "e.position DESC"
        if self.each:
            source += f" LEFT JOIN {self.each} AS f"
            where = f"f.key IS NOT NULL AND ({where})"
            order += ", f.key DESC"
        return (
            f"{self.table.insert_into(list(self.columns))} SELECT {values} FROM {source}"
            f" WHERE e.event_type = '{self.event_type}' AND e.position <= ?"
            " AND e.position NOT IN (SELECT value FROM json_each(?))"
            " AND (? IS NULL OR e.position IN (SELECT value FROM json_each(?)))"
            f" AND CASE WHEN ({self.clean}) THEN 1 ELSE {LEFTOVER_FUNCTION}(e.position) END"
            f" AND ({where}) ORDER BY {order}"
            f" {self.table.on_conflict(list(self.columns))}"
            f" WHERE excluded.position > {self.table.name}.position"
        )


# The SQL function a fold's insert calls with the position of an event it cannot write.
LEFTOVER_FUNCTION = "benchledger_leftover"


def truthy(path: str, source: str = "e.payload") -> str:
    """SQL: 1 when the value at ``path`` is truthy as Python sees it, else 0 (absent: 0)."""
    kind = f"json_type({source}, '{path}')"
    value = text(path, source)
    return (
        f"CASE {kind} WHEN 'true' THEN 1 WHEN 'text' THEN {value} <> ''"
        f" WHEN 'integer' THEN {value} <> 0 WHEN 'real' THEN {value} <> 0"
        f" WHEN 'object' THEN {value} <> '{{}}' WHEN 'array' THEN {value} <> '[]' ELSE 0 END"
    )


def no_positions(conn: Connection, upto: int) -> list[int]:
    return []


@dataclass(frozen=True)
class DatabasePlan:
    """A projection's database replay: its ``folds``, ``python(conn, upto)``: the sorted
    positions of the events its own Python code always replays, and ``only``."""

    folds: tuple[Fold, ...]
    python: Callable[[Connection, int], list[int]] = no_positions
    # The only positions worth folding (None: every event), worked out on a second connection
    # while the other projections replay: a superset of the events the final rows come from.
    only: Callable[[Connection, int], list[int] | None] | None = None


def supported(conn: Connection, event_types: Iterable[str]) -> bool:
    """SQLite with JSON functions, and payloads stored as replay sees them (no upcaster)."""
    return conn.dialect == "sqlite" and not any(t in CURRENT_SCHEMA_VERSION for t in event_types)


def replay_projection(
    conn: Connection,
    plan: DatabasePlan,
    upto: int,
    tables: Sequence[TableSpec],
    apply_python: Callable[[Sequence[int]], None],
    only: Sequence[int] | None = None,
    *,
    read_conn: Connection | None = None,
    events: str = "events",
    self_contained: bool = False,
) -> None:
    """Replay one projection into its empty ``tables``: the events Python must replay go
    first (``apply_python(positions)``), then each fold's guarded insert. An event a fold
    finds unclean (never, for events the contracts admitted) sends the replay round again
    with that event left to Python as well, so Python always writes before SQL does.
    ``read_conn``: where the plan's own queries read the events (the live store, when ``conn``
    is a scratch database with the live one attached as ``events``' schema)."""
    python = plan.python(read_conn or conn, upto)
    apply_python(python)
    fold = _Folding(plan, upto, events, self_contained)
    unclean = fold.run(conn, python, only)
    if not unclean:
        return
    for table in reversed(tables):
        conn.execute(f"DELETE FROM {table.name}")  # SQLite only (``supported``)
    python = sorted({*python, *unclean})
    apply_python(python)
    fold.run(conn, python, only)


@dataclass(frozen=True)
class _Folding:
    """One projection's folds as ``replay_projection`` runs them (once, or twice after an
    unclean event)."""

    plan: DatabasePlan
    upto: int
    events: str
    self_contained: bool

    def run(self, conn: Connection, python: Sequence[int], only: Sequence[int] | None) -> set[int]:
        """Each fold's insert, skipping the ``python`` positions (and, with ``only``, every
        other position); the positions found unclean."""
        unclean: set[int] = set()

        def leftover(position: int) -> int:
            unclean.add(position)
            return 0

        raw = conn.dbapi_connection()
        raw.create_function(LEFTOVER_FUNCTION, 1, leftover)
        try:
            skipped = orjson.dumps(list(python)).decode()
            wanted = None if only is None else orjson.dumps(list(only)).decode()
            for fold in self.plan.folds:
                sql = fold.insert_sql(self.events, self_contained=self.self_contained)
                conn.execute(sql, (self.upto, skipped, wanted, wanted))
        finally:
            raw.create_function(LEFTOVER_FUNCTION, 1, None)
        return unclean


def rows_at(conn: Connection, positions: Sequence[int]) -> list[Sequence[Any]]:
    """``REPLAY_COLUMNS`` tuples of the events at ``positions``, in position order (the kept
    positions of ``event_rows.sparse_query``, a chunk at a time)."""
    rows: list[Sequence[Any]] = []
    for start in range(0, len(positions), _LEFTOVER_CHUNK):
        query = sparse_query(0, 0, [], list(positions[start : start + _LEFTOVER_CHUNK]))
        if query is not None:
            rows.extend(conn.execute(*query).all())
    return rows
