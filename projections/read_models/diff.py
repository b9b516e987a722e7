"""Row-by-row comparison of two copies of the read models: how ``rebuild --verify`` and the
``--as-of`` snapshot check prove that a replay reproduces the live tables.

Both sides are walked in primary-key order (code-point order on PostgreSQL too) and merged, so
memory does not grow with the tables; a projection that fills a cache on demand compares only
the columns a replay reproduces and checks its cache itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import closing
from typing import TYPE_CHECKING, Any

from benchledger.ledger.store.tables import PROJECTION_CHECKPOINTS

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Connection
    from benchledger.ledger.store.tables import TableSpec
    from benchledger.projections.read_models.engine import Projection, ProjectionEngine


def compare_read_models(
    engine: ProjectionEngine, *, checked: Any, reference: Any, limit: int = 20
) -> list[dict[str, Any]]:
    """Rows of every read model and checkpoint that differ between two databases (``checked``
    plays the live side of ``rebuild --verify``, ``reference`` the replay)."""
    chosen = list(engine.projections.values())
    with checked.connect() as a, reference.connect() as b:
        found = compare_tables([*compared_tables(chosen), PROJECTION_CHECKPOINTS], a, b, limit)
        return found + check_caches(chosen, a, limit - len(found))


def compared_tables(projections: Iterable[Projection]) -> list[TableSpec]:
    """The tables (or column subsets) a replay reproduces exactly: a projection's
    ``compared_tables`` when it keeps a cache that is filled on demand, else its tables."""
    return [t for p in projections for t in getattr(p, "compared_tables", p.tables)]


def check_caches(
    projections: Iterable[Projection], conn: Connection, limit: int
) -> list[dict[str, Any]]:
    """Each projection's own check of its on-demand cache against its rows (``check_cache``)."""
    found: list[dict[str, Any]] = []
    for projection in projections:
        check = getattr(projection, "check_cache", None)
        if check is not None and len(found) < limit:
            try:
                found += check(conn, limit - len(found))
            except CELL_ERRORS as exc:
                # A cell of the wrong type (SQLite keeps whatever a hand edit wrote): the
                # cache cannot be read back, which is a difference, not a crash.
                found.append(
                    {
                        "table": f"{projection.name} cache",
                        "problem": "a cached cell cannot be read back "
                        f"({type(exc).__name__}: {str(exc)[:120]}); `benchledger rebuild` "
                        "rewrites it",
                    }
                )
    return found


# What reading a cached cell of the wrong type raises (bytes of text, text of bytes, a number
# where JSON is, JSON of the wrong shape).
CELL_ERRORS: tuple[type[Exception], ...] = (
    TypeError,
    ValueError,  # also orjson.JSONDecodeError and UnicodeDecodeError
    KeyError,
    IndexError,
    AttributeError,
)


def compare_tables(
    tables: Sequence[TableSpec], live: Connection, scratch: Connection, limit: int
) -> list[dict[str, Any]]:
    """Walk both copies of each table in primary-key order and report rows that differ."""
    differences: list[dict[str, Any]] = []
    for table in tables:
        keys = table.primary_key
        # ``stream``: PostgreSQL sends the rows through a server-side cursor, a batch at a time
        # (a plain execute held every row of the table in the client: 955 MB at 1M events).
        live_rows = live.stream(f"{_select(table, live)} ORDER BY {_byte_order(keys, live)}")
        scratch_rows = scratch.stream(
            f"{_select(table, scratch)} ORDER BY {_byte_order(keys, scratch)}"
        )
        with closing(live_rows), closing(scratch_rows):
            for diff in _diff_sorted(live_rows, scratch_rows, table):
                differences.append({"table": table.name, **diff})
                if len(differences) >= limit:
                    return differences
    return differences


def _select(table: TableSpec, conn: Connection) -> str:
    """Every column of ``table`` as ``conn`` should read it (a spec may resolve columns kept
    elsewhere, see ``read_models.ledger_rows.LEDGER_ROW_FACTS``)."""
    select_for = getattr(table, "select_for", None)
    return select_for(conn) if select_for is not None else table.select_sql


def _byte_order(keys: Sequence[str], conn: Connection) -> str:
    """PostgreSQL sorts text by locale; the merge walk needs code-point order on both sides
    (every read-model key column is text)."""
    if conn.dialect != "postgresql":
        return ", ".join(keys)
    return ", ".join(f'{key} COLLATE "C"' for key in keys)


def _diff_sorted(
    live_rows: Iterable[Sequence[Any]], scratch_rows: Iterable[Sequence[Any]], table: TableSpec
) -> Iterator[dict[str, Any]]:
    """Merge two key-ordered walks: rows on one side only, and rows whose columns differ."""
    columns = table.columns
    at = [columns.index(k) for k in table.primary_key]
    live_iter, scratch_iter = iter(live_rows), iter(scratch_rows)
    a, b = next(live_iter, None), next(scratch_iter, None)
    while a is not None or b is not None:
        ka = _order_key(a, at) if a is not None else None
        kb = _order_key(b, at) if b is not None else None
        if a is not None and b is not None and ka == kb:
            if tuple(a) != tuple(b):
                changed = [c for c, x, y in zip(columns, a, b, strict=True) if x != y]
                yield {"key": _shown(kb), "problem": "row differs", "columns": changed}
            a, b = next(live_iter, None), next(scratch_iter, None)
        elif ka is not None and (kb is None or ka < kb):
            yield {"key": _shown(ka), "problem": "only in the live read model"}
            a = next(live_iter, None)
        else:
            yield {"key": _shown(kb), "problem": "missing from the live read model"}
            b = next(scratch_iter, None)


# SQLite's order of storage classes: NULL, numbers, text, blobs. A hand-edited key of another
# type than its column's must compare as ``ORDER BY`` sorted it, not raise (str < int).
_RANK = {type(None): 0, bool: 1, int: 1, float: 1, str: 2, bytes: 3, memoryview: 3}


def _order_key(row: Sequence[Any], at: Sequence[int]) -> tuple[tuple[int, Any], ...]:
    return tuple((_RANK.get(type(row[i]), 4), row[i]) for i in at)


def _shown(key: tuple[tuple[int, Any], ...] | None) -> list[Any]:
    return [value for _rank, value in key or ()]
