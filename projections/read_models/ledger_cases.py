"""The ledger's render cache, filled lazily: the per-row pieces on ``rm_ledger_rows``
(``render_key``, ``json_fragment``, ``markdown_line``) and the per-case table
``rm_ledger_cases``, computed at the first render that needs them and then kept.

Why lazily: building the pieces cost more than everything else a replay does, and most
replayed rows are never rendered again before they change. So a write (live append or
replay) stores the row with its pieces NULL and drops the cached cases the row leaves or
joins; ``fill_render_cache`` (called by the streaming render) computes the pieces of every
row still without them and decides the cases those rows are in.

The invariant that makes this exact: a case row exists in ``rm_ledger_cases`` only while
every row of that case has its pieces and nothing in the case changed since it was decided.
A write keeps it by dropping both cases a row touches; ``render_key IS NULL`` (served by
``ix_rm_ledger_rows_render``) finds the rows to fill. The streaming render still checks
counts and prefixes as it goes, so a cache that does not add up is never published.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import orjson

from benchledger.ledger.store.connection import placeholders
from benchledger.projections.publishing.ledger_fragments import (
    bucket_of_prefix,
    bucket_prefix,
    case_columns,
    prefix_of_key,
    run_columns_of,
)
from benchledger.projections.read_models.ledger_row_text import ROWS, row_text
from benchledger.projections.read_models.tables import LEDGER_CASES, LEDGER_ROWS
from benchledger.projections.read_models.upsert import upsert_rows

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Connection
# Beyond this many cases to decide in one ledger, one ordered scan of the whole ledger is
# cheaper than a range query per case (the first render after a replay or an import).
FULL_REFRESH_CASES = 200
_LOOKUP_CHUNK = 500
# Rows (with their ~3 KB JSON fragment) held before an update: bounds a fill's memory.
_WRITE_BATCH = 1000
# The cache columns a write leaves NULL (filled at render).
CACHE_COLUMNS = ("render_key", "json_fragment", "markdown_line")

Bucket = tuple[str, str, str]  # (ledger_id, benchmark_id, case_id) as the document names them


def write_rows(conn: Connection, items: list[dict], *, fresh: bool = False) -> None:
    """Upsert ledger rows (``rm_ledger_rows`` columns but the cache ones; each item also
    names its case as ``bucket``) with their render pieces NULL, in bounded batches.

    ``fresh``: the render cache is known to be empty (a replay into truncated tables), so no
    cached case can be stale and nothing is looked up; otherwise the cached cases the rows
    were in and are going to be in are dropped first.
    """
    if not items:
        return
    if not fresh:
        stale = stored_buckets(conn, [(i["ledger_id"], i["run_id"]) for i in items])
        stale.update((i["ledger_id"], *i["bucket"]) for i in items)
        drop_cases(conn, stale)
    blank = dict.fromkeys(CACHE_COLUMNS)
    for start in range(0, len(items), _WRITE_BATCH):
        batch = items[start : start + _WRITE_BATCH]
        upsert_rows(conn, LEDGER_ROWS, [{**item, **blank} for item in batch])


def stored_buckets(conn: Connection, keys: Iterable[tuple[str, str]]) -> set[Bucket]:
    """The cached cases the given ``(ledger_id, run_id)`` rows are in now (rows without pieces
    are in no cached case), read before they are rewritten so a run that moves still drops
    the case it leaves."""
    by_ledger: dict[str, list[str]] = {}
    for ledger_id, run_id in keys:
        by_ledger.setdefault(ledger_id, []).append(run_id)
    found: set[Bucket] = set()
    for ledger_id, run_ids in by_ledger.items():
        if not _has_cases(conn, ledger_id):
            continue
        for start in range(0, len(run_ids), _LOOKUP_CHUNK):
            chunk = run_ids[start : start + _LOOKUP_CHUNK]
            query = (
                "SELECT render_key FROM rm_ledger_rows"
                f" WHERE ledger_id = ? AND run_id IN ({placeholders(len(chunk))})"
            )
            for (key,) in conn.execute(query, [ledger_id, *chunk]):
                if key is not None:
                    found.add((ledger_id, *bucket_of_prefix(prefix_of_key(bytes(key)))))
    return found


def _has_cases(conn: Connection, ledger_id: str) -> bool:
    found = conn.execute("SELECT 1 FROM rm_ledger_cases WHERE ledger_id = ? LIMIT 1", (ledger_id,))
    return found.first() is not None


def drop_cases(conn: Connection, buckets: Iterable[Bucket]) -> None:
    """Forget the cached cases (decided again at the next render)."""
    conn.executemany(
        "DELETE FROM rm_ledger_cases WHERE ledger_id = ? AND benchmark_id = ? AND case_id = ?",
        sorted(set(buckets)),
    )


def _unfilled(conn: Connection) -> str:
    """Rows without pieces: the NULL end of ``ix_rm_ledger_rows_render``."""
    return (
        f"SELECT r.run_id, {row_text(conn)} FROM {ROWS}"
        " WHERE r.ledger_id = ? AND r.render_key IS NULL"
    )


_FILL = (
    "UPDATE rm_ledger_rows SET render_key = ?, json_fragment = ?, markdown_line = ?"
    " WHERE ledger_id = ? AND run_id = ?"
)


def fill_render_cache(conn: Connection, ledger_id: str) -> None:
    """Compute the pieces of every row of the ledger still without them, then decide the
    cases those rows are in (kept until a write drops them). Rows whose ids hold NUL get no
    render key and such a ledger is rendered in full, so they are looked at again each time."""
    prefixes: set[bytes] = set()
    updates: list[tuple[Any, ...]] = []
    for run_id, text in conn.execute(_unfilled(conn), (ledger_id,)).all():
        piece = run_columns_of(orjson.loads(text))
        key = piece["render_key"]
        if key is None:
            continue
        prefixes.add(prefix_of_key(key))
        updates.append((key, piece["json_fragment"], piece["markdown_line"], ledger_id, run_id))
        if len(updates) >= _WRITE_BATCH:
            conn.executemany(_FILL, updates)
            updates = []
    conn.executemany(_FILL, updates)
    if prefixes:
        refresh_cases(conn, ledger_id, prefixes)


def _case_rows(conn: Connection) -> str:
    """One case's rows: the render-key range its prefix starts (``ix_rm_ledger_rows_render``)."""
    return (
        f"SELECT {row_text(conn)}, r.position FROM {ROWS}"
        " WHERE r.ledger_id = ? AND r.render_key >= ? AND r.render_key < ?"
    )


def refresh_cases(conn: Connection, ledger_id: str, prefixes: Iterable[bytes]) -> None:
    """Decide each given case of the ledger from its stored rows (all of them filled)."""
    prefixes = set(prefixes)
    if len(prefixes) > FULL_REFRESH_CASES:
        rebuild_ledger_cases(conn, ledger_id)
        return
    updated, emptied = [], []
    for prefix in sorted(prefixes):
        found = conn.execute(_case_rows(conn), (ledger_id, prefix, prefix[:-1] + b"\x01")).all()
        if found:
            updated.append(_case_row(ledger_id, prefix, found))
        else:
            emptied.append((ledger_id, *bucket_of_prefix(prefix)))
    drop_cases(conn, emptied)
    _upsert_cases(conn, updated)


def rebuild_ledger_cases(conn: Connection, ledger_id: str) -> None:
    """Every case of one ledger from one scan in render-key order (one case in memory at a
    time; the decided cases are small)."""
    conn.execute("DELETE FROM rm_ledger_cases WHERE ledger_id = ?", (ledger_id,))
    _upsert_cases(conn, list(_all_cases(conn, ledger_id)))


def _all_cases(conn: Connection, ledger_id: str) -> Iterator[dict]:
    query = (
        f"SELECT r.render_key, {row_text(conn)}, r.position FROM {ROWS}"
        " WHERE r.ledger_id = ? AND r.render_key IS NOT NULL ORDER BY r.render_key"
    )
    prefix = b""  # no render key's prefix is empty
    group: list[Sequence[Any]] = []
    for key, text, position in conn.stream(query, (ledger_id,), batch=1000):
        this = prefix_of_key(bytes(key))
        if this != prefix:
            if group:
                yield _case_row(ledger_id, prefix, group)
            prefix, group = this, []
        group.append((text, position))
    if group:
        yield _case_row(ledger_id, prefix, group)


def _case_row(ledger_id: str, prefix: bytes, found: Sequence[Sequence[Any]]) -> dict:
    bid, cid = bucket_of_prefix(prefix)
    return {
        "ledger_id": ledger_id,
        **case_columns(bid, cid, [orjson.loads(text) for text, _position in found]),
        "position": max(position for _text, position in found),
    }


def _upsert_cases(conn: Connection, cases: list[dict]) -> None:
    upsert_rows(conn, LEDGER_CASES, cases)


def check_render_cache(conn: Connection, limit: int) -> list[dict[str, Any]]:
    """What ``rebuild --verify`` reports about the cache: every filled row's pieces and every
    cached case must equal what their rows give now (a cache is never replayed, so it is
    checked against the rows instead of against a replay)."""
    problems: list[dict[str, Any]] = []
    rows = conn.stream(
        f"SELECT r.ledger_id, r.run_id, {row_text(conn)}, r.render_key, r.json_fragment,"
        f" r.markdown_line FROM {ROWS} WHERE r.render_key IS NOT NULL",
        batch=1000,
    )
    for ledger_id, run_id, text, key, fragment, line in rows:
        piece = run_columns_of(orjson.loads(text))
        stored = (bytes(key), bytes(fragment) if fragment is not None else None, line)
        if stored != (piece["render_key"], piece["json_fragment"], piece["markdown_line"]):
            problems.append(
                {"table": "rm_ledger_rows", "key": [ledger_id, run_id], "problem": "stale render"}
            )
            if len(problems) >= limit:
                return problems
    cached = conn.execute(f"{LEDGER_CASES.select_sql}").all()
    columns = LEDGER_CASES.columns
    for found in cached:
        case = dict(zip(columns, found, strict=True))
        prefix = bucket_prefix(case["benchmark_id"], case["case_id"])
        expected = None
        if prefix is not None:
            rows_of = conn.execute(
                _case_rows(conn), (case["ledger_id"], prefix, prefix[:-1] + b"\x01")
            ).all()
            if rows_of:
                expected = _case_row(case["ledger_id"], prefix, rows_of)
        if expected is not None:
            expected["json_head"] = bytes(expected["json_head"])
            case["json_head"] = bytes(case["json_head"])
        if expected != case:
            key = [case["ledger_id"], case["benchmark_id"], case["case_id"]]
            problems.append({"table": "rm_ledger_cases", "key": key, "problem": "stale render"})
            if len(problems) >= limit:
                return problems
    return problems
