"""Helpers for store tests: open a store on a URL, make simple events."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from benchledger.ledger.store.connection import Connection
from benchledger.ledger.store.events import LEDGER_UPSERTED, NewEvent
from benchledger.services.store_session import OpenStore, open_store


def opened(url: str) -> OpenStore:
    return open_store(url)


@contextmanager
def store_connection(url: str) -> Iterator[Connection]:
    """A connection to the store at ``url`` (opened, and closed after)."""
    with opened(url) as s:
        with s.store.database.connect() as conn:
            yield conn


def table_count(url: str, table: str) -> int:
    """How many rows ``table`` of the store at ``url`` holds."""
    with store_connection(url) as conn:
        return int(conn.execute(f"SELECT count(*) FROM {table}").scalar())


def upsert_event(ledger: str, run_id: str, score: float = 1.0, case: str = "c1") -> NewEvent:
    """A ``ledger_upserted`` event shaped as the upsert handler writes it (its contract)."""
    row = {
        "run_id": run_id,
        "benchmark_id": "b",
        "case_id": case,
        "recorded_at": "2026-01-01T00:00:00Z",
        "official_score": score,
    }
    return NewEvent(
        stream=f"ledger/{ledger}",
        event_type=LEDGER_UPSERTED,
        payload={
            "ledger_id": ledger,
            "ledger_path": f"{ledger}.json",
            "row": row,
            "merged_into": "appended",
            "touched_run_id": None,
            "rules_version": "test",
            "updated_at": "2026-01-01T00:00:00Z",
        },
    )


def table_rows(conn, table) -> list[tuple]:  # noqa: ANN001 - a Connection and a TableSpec
    """Every row of a table in primary-key order, as plain tuples."""
    order = ", ".join(table.primary_key)
    return [tuple(r) for r in conn.execute(f"{table.select_sql} ORDER BY {order}")]


def assert_rebuild_reports_and_empties(
    url: str, damage: Callable[[Connection], dict[str, Any]], table: str, refill: Callable[[], Any]
) -> None:
    """A kept cache entry ``damage`` changes (in one transaction; it returns the difference
    ``verify_rebuild`` must report) is named by ``rebuild --verify``; a rebuild empties
    ``table``, and ``refill`` fills it again."""
    with opened(url) as s:
        assert s.projections.verify_rebuild(s.store).ok
        with s.store.database.begin() as conn:
            problem = damage(conn)
        report = s.projections.verify_rebuild(s.store)
        assert not report.ok
        assert problem in report.differences
        s.projections.rebuild(s.store)
    assert table_count(url, table) == 0  # a rebuild empties the cache; the next read fills it
    refill()
    assert table_count(url, table) > 0
