"""The per-case read model (``rm_ledger_cases``): refreshed for exactly the cases a write
touched, so an upsert into a 30,000-row ledger re-decides one case, not 6,000.

A case is identified by its render-key prefix (``ledger_fragments.bucket_prefix``); its rows
are the range of ``rm_ledger_rows.render_key`` starting with that prefix, served by
``ix_rm_ledger_rows_render``. Rows are only ever upserted, but an upsert may move a run to
another case, so a write refreshes both the cases its rows left and the cases they joined; a
case left without rows is deleted.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

import orjson

from ledger.connection import placeholders
from projections.ledger_fragments import (
    bucket_of_prefix,
    bucket_prefix,
    case_columns,
    prefix_of_key,
    run_columns,
    run_columns_of,
)
from projections.ledger_v0 import bucket_of
from projections.tables import LEDGER_CASES, LEDGER_ROWS

if TYPE_CHECKING:
    from ledger.connection import Connection

# Beyond this many touched cases in one ledger, one ordered scan of the whole ledger is
# cheaper than a range query per case (an import, a large merge, the end of a replay).
FULL_REFRESH_CASES = 200
_LOOKUP_CHUNK = 500
# Rows (with their ~3 KB JSON fragment) held before an upsert: bounds a replay's memory.
_WRITE_BATCH = 1000

Bucket = tuple[str, bytes]  # (ledger_id, case prefix)


def write_rows(conn: Connection, items: list[dict], *, decide_cases: bool = False) -> set[Bucket]:
    """Upsert ledger rows (``rm_ledger_rows`` columns but the rendered ones) with their
    rendered pieces, in bounded batches; returns the cases the rows are in.

    ``decide_cases``: the rows are every row their ledgers have (a replay that never wrote
    before), so each case is decided from the same parsed rows, case by case, instead of
    parsing every row a second time from the table.
    """
    from projections.upsert import upsert_rows

    touched: set[Bucket] = set()
    if not decide_cases:
        for start in range(0, len(items), _WRITE_BATCH):
            batch = [
                {**item, **run_columns(item["row"])} for item in items[start : start + _WRITE_BATCH]
            ]
            upsert_rows(conn, LEDGER_ROWS, batch)
            touched.update(_buckets_of(batch))
        return touched
    groups: dict[tuple[str, str, str], list[dict]] = {}
    for item in items:
        bucket = bucket_of({"benchmark_id": item["benchmark_id"], "case_id": item["case_id"]})
        groups.setdefault((item["ledger_id"], *bucket), []).append(item)
    rows_batch: list[dict] = []
    cases_batch: list[dict] = []
    undecided: set[str] = set()
    for (ledger_id, bid, cid), group in groups.items():
        parsed = [orjson.loads(item["row"]) for item in group]
        rows_batch += [
            {**item, **run_columns_of(row)} for item, row in zip(group, parsed, strict=True)
        ]
        prefix = bucket_prefix(bid, cid)
        if prefix is not None and all(bucket_of(row) == (bid, cid) for row in parsed):
            case = case_columns(bid, cid, parsed)
            positions = (item["position"] for item in group)
            cases_batch.append({"ledger_id": ledger_id, **case, "position": max(positions)})
        else:
            undecided.add(ledger_id)
        if len(rows_batch) >= _WRITE_BATCH:
            upsert_rows(conn, LEDGER_ROWS, rows_batch)
            touched.update(_buckets_of(rows_batch))
            rows_batch = []
    upsert_rows(conn, LEDGER_ROWS, rows_batch)
    touched.update(_buckets_of(rows_batch))
    upsert_rows(conn, LEDGER_CASES, cases_batch)
    for ledger_id in sorted(undecided):
        rebuild_ledger_cases(conn, ledger_id)
    return touched


def _buckets_of(rows: list[dict]) -> set[Bucket]:
    return {
        (r["ledger_id"], prefix_of_key(r["render_key"]))
        for r in rows
        if r["render_key"] is not None
    }


def stored_buckets(conn: Connection, keys: Iterable[tuple[str, str]]) -> set[Bucket]:
    """The cases the given ``(ledger_id, run_id)`` rows are in now, read before they are
    rewritten so a run that moves still refreshes the case it leaves."""
    by_ledger: dict[str, list[str]] = {}
    for ledger_id, run_id in keys:
        by_ledger.setdefault(ledger_id, []).append(run_id)
    found: set[Bucket] = set()
    for ledger_id, run_ids in by_ledger.items():
        for start in range(0, len(run_ids), _LOOKUP_CHUNK):
            chunk = run_ids[start : start + _LOOKUP_CHUNK]
            query = (
                "SELECT render_key FROM rm_ledger_rows"
                f" WHERE ledger_id = ? AND run_id IN ({placeholders(len(chunk))})"
            )
            for (key,) in conn.execute(query, [ledger_id, *chunk]):
                if key is not None:
                    found.add((ledger_id, prefix_of_key(bytes(key))))
    return found


# One case's rows: the render-key range its prefix starts (``ix_rm_ledger_rows_render``).
_CASE_ROWS = (
    'SELECT "row", position FROM rm_ledger_rows'
    " WHERE ledger_id = ? AND render_key >= ? AND render_key < ?"
)


def refresh_cases(conn: Connection, buckets: Iterable[Bucket]) -> None:
    """Re-decide each touched case from its stored rows (after they were written)."""
    by_ledger: dict[str, set[bytes]] = {}
    for ledger_id, prefix in buckets:
        by_ledger.setdefault(ledger_id, set()).add(prefix)
    for ledger_id, prefixes in by_ledger.items():
        if len(prefixes) > FULL_REFRESH_CASES:
            rebuild_ledger_cases(conn, ledger_id)
            continue
        updated, emptied = [], []
        for prefix in sorted(prefixes):
            found = conn.execute(_CASE_ROWS, (ledger_id, prefix, prefix[:-1] + b"\x01")).all()
            if found:
                updated.append(_case_row(ledger_id, prefix, found))
            else:
                emptied.append(prefix)
        _write(conn, ledger_id, updated, emptied)


def rebuild_ledger_cases(conn: Connection, ledger_id: str) -> None:
    """Every case of one ledger from one scan in render-key order (one case in memory at a
    time; the decided cases are small)."""
    conn.execute("DELETE FROM rm_ledger_cases WHERE ledger_id = ?", (ledger_id,))
    _write(conn, ledger_id, list(_all_cases(conn, ledger_id)), [])


def _all_cases(conn: Connection, ledger_id: str) -> Iterator[dict]:
    query = (
        'SELECT render_key, "row", position FROM rm_ledger_rows'
        " WHERE ledger_id = ? AND render_key IS NOT NULL ORDER BY render_key"
    )
    prefix, group = None, []
    for key, text, position in conn.stream(query, (ledger_id,), batch=1000):
        this = prefix_of_key(bytes(key))
        if this != prefix:
            if group:
                yield _case_row(ledger_id, prefix, group)
            prefix, group = this, []
        group.append((text, position))
    if group:
        yield _case_row(ledger_id, prefix, group)


def _case_row(ledger_id: str, prefix: bytes, found: list) -> dict:
    bid, cid = bucket_of_prefix(prefix)
    return {
        "ledger_id": ledger_id,
        **case_columns(bid, cid, [orjson.loads(text) for text, _position in found]),
        "position": max(position for _text, position in found),
    }


def _write(conn: Connection, ledger_id: str, updated: list[dict], emptied: list[bytes]) -> None:
    from projections.upsert import upsert_rows

    for prefix in emptied:
        bid, cid = bucket_of_prefix(prefix)
        conn.execute(
            "DELETE FROM rm_ledger_cases WHERE ledger_id = ? AND benchmark_id = ? AND case_id = ?",
            (ledger_id, bid, cid),
        )
    upsert_rows(conn, LEDGER_CASES, updated)
