"""The read side of ``compare``: the ledger rows of one benchmark, as the read model holds them.

Kept apart from the statistics so that any holder of rows — the live store, or a scratch store
replayed to an earlier position for ``--as-of`` — can hand them to ``build_compare``.

Why rows are read in two passes: a stored row is ~2 KB of JSON, of which ``compare`` reads a
dozen keys (``projections.compare.ROW_KEYS``); parsing whole rows was most of its time on a
30,000-row ledger (bench/README.md). The first pass asks the database for those keys only, as
one small JSON array per row whose values keep their stored text (SQLite's ``json_extract``
with several paths, PostgreSQL's ``json`` operators), so each value parses to exactly what the
whole row would have given. Only the rows ``compare`` must judge by the ledger rules
(``projections.compare.needs_judgement``: imported loopx rows, uncountable runs), which read
more keys, are read whole in a second pass — in the same transaction, so both passes see one
state of the read model.

Values that are the same text in many rows (attempt outcomes, comparability facts) are parsed
once and shared: ``build_compare`` only reads them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import orjson

from ledger.connection import placeholders, scalars
from projections.compare import ROW_KEYS, matches_benchmark, needs_judgement
from projections.ledger_row_text import ROWS, row_text

if TYPE_CHECKING:
    from ledger.connection import Connection

# Keys whose values repeat across rows, parsed once per distinct text.
SHARED_KEYS = ("attempt_outcomes", "comparability")
_SCALAR_KEYS = tuple(k for k in ROW_KEYS if k not in SHARED_KEYS)
_CHUNK = 500  # run ids per ``IN (...)``


def _columns(dialect: str) -> str:
    """SQL for the projected columns: the run id, an array of the scalar keys, each shared key.

    SQLite's ``json_extract`` with several paths returns an array holding each value's stored
    text (an absent key is ``null``, as ``dict.get`` sees it) and ``->`` a value's stored text;
    PostgreSQL's ``json`` (not ``jsonb``, which would rewrite numbers such as ``1e20``) keeps
    the stored text as well.
    """
    if dialect == "sqlite":
        # A row held only by its event (``projections.ledger_row_text``) is read there: the
        # event columns are NULL for every other row, so ``coalesce`` picks the one that holds it.
        paths = ", ".join(f"'$.{key}'" for key in _SCALAR_KEYS)
        event_paths = ", ".join(f"'$.row.{key}'" for key in _SCALAR_KEYS)
        shared = ", ".join(
            f"coalesce(r.\"row\" -> '$.{key}', e.payload -> '$.row.{key}')" for key in SHARED_KEYS
        )
        scalars_sql = (
            f'coalesce(json_extract(r."row", {paths}), json_extract(e.payload, {event_paths}))'
        )
        return f"r.run_id, {scalars_sql}, {shared}"
    values = ", ".join(f"j -> '{key}'" for key in _SCALAR_KEYS)
    shared = ", ".join(f"(j -> '{key}')::text" for key in SHARED_KEYS)
    return f"run_id, json_build_array({values})::text, {shared}"


def _source(dialect: str, benchmarks: int, run_ids: int | None = None) -> str:
    where = f"r.ledger_id = ? AND r.benchmark_id IN ({placeholders(benchmarks)})"
    if run_ids is not None:
        where += f" AND r.run_id IN ({placeholders(run_ids)})"
    if dialect == "sqlite":
        return f"FROM {ROWS} WHERE {where}"
    row = """coalesce(r."row"::json, (e.payload)::json -> 'row')"""
    return f"FROM (SELECT r.run_id, {row} AS j FROM {ROWS} WHERE {where}) AS x"


def projection_supported(conn: Connection) -> bool:
    """SQLite's ``->`` arrived in 3.38 (2022); an older library reads whole rows."""
    if conn.dialect != "sqlite":
        return True
    import sqlite3

    return sqlite3.sqlite_version_info >= (3, 38)


def read_compare_rows(conn: Connection, ledger_id: str, benchmark_id: str) -> list[dict[str, Any]]:
    """Rows of ``benchmark_id`` (every version of it when the id has none), archived included:
    compare reports archived runs as exclusions rather than forgetting them.

    Each row holds the keys of ``ROW_KEYS`` it has, or, when ``compare`` must judge it, all of
    its keys; ``build_compare`` gives the same document for these as for the whole rows.
    """
    if not projection_supported(conn):
        return read_whole_rows(conn, ledger_id, benchmark_id)
    benchmarks = benchmarks_of(conn, ledger_id, benchmark_id)
    return list(rows_by_id(conn, ledger_id, benchmarks).values())


def rows_by_id(
    conn: Connection,
    ledger_id: str,
    benchmarks: Sequence[str],
    run_ids: Sequence[str] | None = None,
) -> dict[str, dict[str, Any]]:
    """``read_compare_rows``' rows of ``benchmarks`` by run id: every row, or those of
    ``run_ids`` (read ``_CHUNK`` ids at a time)."""
    if not benchmarks:
        return {}
    if not projection_supported(conn):
        return _whole_rows_by_id(conn, ledger_id, benchmarks, run_ids)
    loads = orjson.loads
    shared: dict[str | None, Any] = {None: None}
    rows: dict[str, dict[str, Any]] = {}
    judged: list[str] = []
    for chunk in _chunks(run_ids):
        source = _source(conn.dialect, len(benchmarks), None if chunk is None else len(chunk))
        sql = f"SELECT {_columns(conn.dialect)} {source}"
        params = (ledger_id, *benchmarks, *(chunk or ()))
        for run_id, scalar_text, *shared_texts in conn.execute(sql, params):
            values = zip(_SCALAR_KEYS, loads(scalar_text), strict=True)
            row = {key: value for key, value in values if value is not None}
            for key, text in zip(SHARED_KEYS, shared_texts, strict=True):
                if text not in shared:
                    shared[text] = loads(text)
                if (value := shared[text]) is not None:
                    row[key] = value
            if needs_judgement(row):
                judged.append(run_id)
            rows[run_id] = row
    rows.update(_whole_rows_by_id(conn, ledger_id, benchmarks, judged))
    return rows


def _chunks(run_ids: Sequence[str] | None) -> Iterator[Sequence[str] | None]:
    if run_ids is None:
        yield None
        return
    for start in range(0, len(run_ids), _CHUNK):
        yield run_ids[start : start + _CHUNK]


def _whole_rows_by_id(
    conn: Connection, ledger_id: str, benchmarks: Sequence[str], run_ids: Sequence[str] | None
) -> dict[str, dict[str, Any]]:
    """Whole rows of ``benchmarks`` by run id: every row, or those of ``run_ids``."""
    found: dict[str, dict[str, Any]] = {}
    if run_ids is not None and not run_ids:
        return found
    sql = (
        f"SELECT r.run_id, {row_text(conn)} FROM {ROWS} WHERE r.ledger_id = ? "
        f"AND r.benchmark_id IN ({placeholders(len(benchmarks))})"
    )
    for chunk in _chunks(run_ids):
        params: tuple[Any, ...] = (ledger_id, *benchmarks)
        chunk_sql = sql
        if chunk is not None:
            chunk_sql += f" AND r.run_id IN ({placeholders(len(chunk))})"
            params += tuple(chunk)
        for run_id, text in conn.execute(chunk_sql, params):
            found[run_id] = orjson.loads(text)
    return found


def read_whole_rows(conn: Connection, ledger_id: str, benchmark_id: str) -> list[dict[str, Any]]:
    """The same rows, every one parsed whole: what ``read_compare_rows`` must be equivalent to
    (and reads itself on an SQLite older than 3.38)."""
    benchmarks = benchmarks_of(conn, ledger_id, benchmark_id)
    return list(_whole_rows_by_id(conn, ledger_id, benchmarks, None).values())


def benchmarks_of(conn: Connection, ledger_id: str, benchmark_id: str) -> list[str]:
    """The stored benchmark ids ``benchmark_id`` names (itself, or every version of a name)."""
    if "@" in benchmark_id:
        return [benchmark_id]
    query = "SELECT DISTINCT benchmark_id FROM rm_ledger_rows WHERE ledger_id = ?"
    return [
        b for b in scalars(conn.execute(query, (ledger_id,))) if matches_benchmark(b, benchmark_id)
    ]
