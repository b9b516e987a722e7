"""The read side of ``compare``: the ledger rows of one benchmark, as the read model holds them.

Kept apart from the statistics so that any holder of rows — the live store, or a scratch store
replayed to an earlier position for ``--as-of`` — can hand them to ``build_compare``.

Why rows are read in two passes: a stored row is ~2 KB of JSON, of which ``compare`` reads a
dozen keys (``projections.reports.compare.facts.ROW_KEYS``); parsing whole rows was most of its
time on a
30,000-row ledger (bench/README.md). The first pass asks the database for those keys only, as
one small JSON array per row whose values keep their stored text (SQLite's ``json_extract``
with several paths), so each value parses to exactly what the whole row would have given.
PostgreSQL reads whole rows: its ``json`` operators parse the value again at every ``->``, and
the dozen extractions per row took 7 times as long as reading the rows (17-19 s against 3-4 s
for 30,000 rows, bench/README.md). Only the rows ``compare`` must judge by the ledger rules
(``projections.reports.compare.facts.needs_judgement``: imported loopx rows, uncountable runs),
which read
more keys, are read whole in a second pass — in the same transaction, so both passes see one
state of the read model.

Values that are the same text in many rows (attempt outcomes, comparability facts) are parsed
once and shared: ``build_compare`` only reads them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import orjson

from benchledger.ledger.store.connection import placeholders, scalars
from benchledger.projections.read_models.ledger_row_text import ROWS, row_text
from benchledger.projections.reports.compare.facts import (
    ROW_KEYS,
    matches_benchmark,
    needs_judgement,
)

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Connection
# Keys whose values repeat across rows, parsed once per distinct text.
SHARED_KEYS = ("attempt_outcomes", "comparability")
_SCALAR_KEYS = tuple(k for k in ROW_KEYS if k not in SHARED_KEYS)
_CHUNK = 500  # run ids per ``IN (...)``


def _columns() -> str:
    """SQL (SQLite) for the projected columns: the run id, an array of the scalar keys, each
    shared key. ``json_extract`` with several paths returns an array holding each value's
    stored text (an absent key is ``null``, as ``dict.get`` sees it) and ``->`` a value's
    stored text."""
    # A row held only by its event (``projections.read_models.ledger_row_text``) is read there: the
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


def _where(benchmarks: int, run_ids: int | None, sqlite: bool = True) -> str:
    """The rows of the benchmarks, or of ``run_ids`` of them. By run id on SQLite, the
    benchmark test is written ``+r.benchmark_id`` so that it uses no index: SQLite (without
    statistics) otherwise walked the benchmark's whole case index for every chunk of 500 ids,
    60,000 rows a chunk (a compare that read 40,000 rows whole spent 8 s on it), instead of
    looking each id up by the primary key."""
    column = "+r.benchmark_id" if run_ids is not None and sqlite else "r.benchmark_id"
    where = f"r.ledger_id = ? AND {column} IN ({placeholders(benchmarks)})"
    if run_ids is not None:
        where += f" AND r.run_id IN ({placeholders(run_ids)})"
    return where


def projection_supported(conn: Connection) -> bool:
    """SQLite 3.38 or later (``->`` arrived then); PostgreSQL and an older SQLite read whole
    rows (see the module docstring)."""
    if conn.dialect != "sqlite":
        return False

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
        where = _where(len(benchmarks), None if chunk is None else len(chunk))
        sql = f"SELECT {_columns()} FROM {ROWS} WHERE {where}"
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
    sqlite = conn.dialect == "sqlite"
    for chunk in _chunks(run_ids):
        where = _where(len(benchmarks), None if chunk is None else len(chunk), sqlite)
        sql = f"SELECT r.run_id, {row_text(conn)} FROM {ROWS} WHERE {where}"
        for run_id, text in conn.execute(sql, (ledger_id, *benchmarks, *(chunk or ()))):
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
