"""The event table refuses an insert that would replace an event, on both databases.

SQLite's ``REPLACE`` deletes the conflicting row without firing delete triggers, so only the
``BEFORE INSERT`` trigger of migration 0003 stands in its way; PostgreSQL's upsert goes
through the update trigger.
"""

from __future__ import annotations

import pytest

from benchledger.ledger.store.tables import EVENTS
from tests.support_store import opened, upsert_event


def _first_row(conn) -> dict:  # noqa: ANN001 - a Connection
    row = conn.execute(f"{EVENTS.select_sql} WHERE position = 1").first()
    return dict(zip(EVENTS.columns, row, strict=True))


def _attempt(db_url: str, sql: str, values: tuple) -> None:
    with opened(db_url) as s:
        with s.store.database.connect() as probe:
            errors = probe.errors
        with pytest.raises(errors) as caught:
            with s.store.database.begin() as conn:
                conn.execute(sql, values)
        assert "append-only" in str(caught.value)


def _store_with_two_events(db_url: str) -> tuple[dict, int]:
    s = opened(db_url)
    s.store.append([upsert_event("L", "a"), upsert_event("L", "b")], idempotency_key="k1")
    with s.store.database.connect() as conn:
        first = _first_row(conn)
    s.close()
    return first, 2


def _forged(first: dict, **changes) -> tuple:
    row = {**first, "payload": first["payload"].replace('"a"', '"forged"'), **changes}
    return tuple(row[c] for c in EVENTS.columns)


SQLITE_REPLACES = ["REPLACE INTO", "INSERT OR REPLACE INTO"]


@pytest.mark.parametrize("verb", SQLITE_REPLACES)
@pytest.mark.parametrize(
    "collision",
    [
        {},  # same position, same event id
        {"position": 99},  # same event id only
        {"position": 99, "event_id": "e-new"},  # same idempotency key only
        {"position": 99, "event_id": "e-new", "idempotency_key": None},  # same stream version
    ],
)
def test_sqlite_replace_onto_an_event_is_refused(db_url, verb, collision):
    if not db_url.startswith("sqlite"):
        pytest.skip("REPLACE is SQLite's")
    first, head = _store_with_two_events(db_url)
    columns = ", ".join(EVENTS.columns)
    marks = ", ".join("?" * len(EVENTS.columns))
    _attempt(db_url, f"{verb} events ({columns}) VALUES ({marks})", _forged(first, **collision))
    _unchanged(db_url, first, head)


def test_upsert_onto_an_event_is_refused(db_url):
    first, head = _store_with_two_events(db_url)
    columns = ", ".join(EVENTS.columns)
    marks = ", ".join("?" * len(EVENTS.columns))
    sql = (
        f"INSERT INTO events ({columns}) VALUES ({marks}) "
        "ON CONFLICT (position) DO UPDATE SET payload = excluded.payload"
    )
    _attempt(db_url, sql, _forged(first))
    _unchanged(db_url, first, head)


def test_a_new_event_still_appends(db_url):
    first, head = _store_with_two_events(db_url)
    s = opened(db_url)
    s.store.append([upsert_event("L", "c")])
    assert s.store.verify().ok and s.store.head_position() == head + 1
    s.close()


def _unchanged(db_url: str, first: dict, head: int) -> None:
    s = opened(db_url)
    with s.store.database.connect() as conn:
        assert _first_row(conn) == first
    assert s.store.head_position() == head
    assert s.store.verify().ok
    s.close()
