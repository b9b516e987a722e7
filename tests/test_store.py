"""The event store suite: every backend must pass all of it (SQLite and PostgreSQL)."""

from __future__ import annotations

import pytest

from benchledger.ledger.core.errors import ConcurrencyError
from benchledger.ledger.store.events import NewEvent
from tests.support_store import opened, upsert_event


@pytest.mark.synthetic_events  # hand-made payloads on purpose
def test_append_assigns_positions_versions_and_chain(db_url):
    s = opened(db_url)
    r1 = s.store.append([upsert_event("L", "a"), upsert_event("L", "b")], metadata={"actor": "t"})
    r2 = s.store.append([NewEvent("goal/g", "run_built", {"x": 1})])
    assert [e.position for e in r1.events + r2.events] == [1, 2, 3]
    assert [e.stream_version for e in r1.events] == [1, 2]
    assert r2.events[0].stream_version == 1
    assert r1.events[0].correlation_id == r1.events[1].correlation_id
    assert r1.events[0].correlation_id != r2.events[0].correlation_id
    assert r1.events[1].prev_hash == r1.events[0].hash
    assert r1.events[0].metadata["actor"] == "t"
    back = list(s.store.read())
    assert [e.hash for e in back] == [e.hash for e in r1.events + r2.events]
    assert back[0].payload == r1.events[0].payload
    assert back[0].recorded_at.endswith("Z")
    assert [e.position for e in s.store.read(stream="goal/g")] == [3]
    assert [e.position for e in s.store.read(event_types=["run_built"])] == [3]
    assert [e.position for e in s.store.read(from_position=2, to_position=2)] == [2]
    assert s.store.verify().ok
    s.close()


def test_stale_expected_version_is_a_conflict_and_writes_nothing(db_url):
    s = opened(db_url)
    s.store.append([upsert_event("L", "a")], expected_versions={"ledger/L": 0})
    with pytest.raises(ConcurrencyError, match="expected 0"):
        s.store.append([upsert_event("L", "b")], expected_versions={"ledger/L": 0})
    assert s.store.head_position() == 1
    s.store.append([upsert_event("L", "b")], expected_versions={"ledger/L": 1})
    assert s.store.stream_version("ledger/L") == 2
    s.close()


def test_idempotency_key_returns_existing_events_and_writes_nothing(db_url):
    s = opened(db_url)
    first = s.store.append(
        [upsert_event("L", "a"), upsert_event("L", "b")], idempotency_key="ingest:abc"
    )
    again = s.store.append(
        [upsert_event("L", "a"), upsert_event("L", "b")], idempotency_key="ingest:abc"
    )
    assert again.already_recorded and not first.already_recorded
    assert [e.event_id for e in again.events] == [e.event_id for e in first.events]
    assert s.store.head_position() == 2
    s.close()


def test_nan_payload_is_refused(db_url):
    from benchledger.ledger.core.errors import InputError

    s = opened(db_url)
    with pytest.raises(InputError):
        s.store.append([NewEvent("goal/g", "run_built", {"x": float("nan")})])
    assert s.store.head_position() == 0
    s.close()


def test_a_large_append_goes_in_batch_by_batch_and_keeps_the_chain(db_url):
    """More events than one INSERT holds (``EVENTS_PER_INSERT``) are inserted batch by batch
    while the chain is built: every position once, in order, and the chain verifies."""
    from benchledger.ledger.store.event_store import EVENTS_PER_INSERT

    s = opened(db_url)
    n = 2 * EVENTS_PER_INSERT + 5
    result = s.store.append([upsert_event("L", f"r{i}") for i in range(n)])
    assert [e.position for e in result.events] == list(range(1, n + 1))
    assert [e.position for e in s.store.read()] == list(range(1, n + 1))
    assert s.store.verify().ok
    s.close()


def test_a_bad_payload_after_the_first_batch_leaves_nothing_behind(db_url):
    """A payload that fails after a first batch went in: the append's transaction is rolled
    back, so no event of it stays (nor does the head move)."""
    from benchledger.ledger.core.errors import InputError
    from benchledger.ledger.store.event_store import EVENTS_PER_INSERT

    s = opened(db_url)
    events = [upsert_event("L", f"r{i}") for i in range(EVENTS_PER_INSERT + 3)]
    events.append(NewEvent("goal/g", "run_built", {"x": float("nan")}))
    with pytest.raises(InputError):
        s.store.append(events)
    assert s.store.head_position() == 0
    assert list(s.store.read()) == []
    s.close()


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE events SET payload = '{}' WHERE position = 1",
        "DELETE FROM events WHERE position = 1",
    ],
)
def test_triggers_refuse_update_and_delete(db_url, statement):
    s = opened(db_url)
    s.store.append([upsert_event("L", "a")])
    with pytest.raises(Exception, match="append-only"):
        with s.store.database.begin() as conn:
            conn.execute(statement)
    assert s.store.verify().ok
    s.close()


def _drop_update_trigger(conn) -> None:
    conn.execute(
        "DROP TRIGGER events_no_update" + (" ON events" if conn.dialect == "postgresql" else "")
    )


@pytest.mark.synthetic_events  # edits a payload behind the triggers' back
def test_verify_catches_an_edit_behind_the_triggers_back(db_url):
    s = opened(db_url)
    s.store.append([upsert_event("L", str(i)) for i in range(5)])
    with s.store.database.begin() as conn:
        _drop_update_trigger(conn)
        conn.execute(
            "UPDATE events SET payload = :p WHERE position = 3", {"p": '{"tampered":true}'}
        )
    report = s.store.verify()
    assert not report.ok
    assert report.first_bad_position == 3
    assert "edited" in report.reason
    s.close()


def test_verify_catches_a_deleted_event(db_url):
    s = opened(db_url)
    s.store.append([upsert_event("L", str(i)) for i in range(5)])
    with s.store.database.begin() as conn:
        conn.execute(
            "DROP TRIGGER events_no_delete" + (" ON events" if conn.dialect == "postgresql" else "")
        )
        conn.execute("DELETE FROM events WHERE position = 4")
    report = s.store.verify()
    assert not report.ok and report.first_bad_position == 4
    s.close()


def test_verify_catches_reordered_events(db_url):
    s = opened(db_url)
    s.store.append([upsert_event("L", str(i)) for i in range(4)])
    with s.store.database.begin() as conn:
        _drop_update_trigger(conn)
        # swap the payloads of positions 2 and 3 (a reorder that keeps the positions dense)
        found = conn.execute("SELECT position, payload FROM events WHERE position IN (2, 3)")
        rows = {position: payload for position, payload in found}
        conn.execute("UPDATE events SET payload = :p WHERE position = 2", {"p": rows[3]})
        conn.execute("UPDATE events SET payload = :p WHERE position = 3", {"p": rows[2]})
    report = s.store.verify()
    assert not report.ok and report.first_bad_position == 2
    s.close()


def test_stores_in_two_postgresql_schemas_do_not_queue_behind_each_other(postgres_ok):
    """The append lock is per schema: a long command on one store never holds up another store
    in the same database, while writers of one store still queue (test_concurrent_ingest)."""
    import threading

    from tests.conftest import PG_BASE_URL, _drop_pg_schema, _fresh_pg_schema

    if not postgres_ok:
        pytest.skip("PostgreSQL not reachable")
    schemas = [_fresh_pg_schema(), _fresh_pg_schema()]
    first, second = (opened(f"{PG_BASE_URL}?options=-csearch_path%3D{s}") for s in schemas)
    try:
        done = threading.Event()
        with first.store.transaction() as uow:  # holds the first store's append lock
            uow.append([upsert_event("L", "a")])
            writer = threading.Thread(
                target=lambda: (second.store.append([upsert_event("L", "b")]), done.set())
            )
            writer.start()
            assert done.wait(10), "the second store waited for the first store's lock"
        writer.join()
        assert first.store.head_position() == 1 and second.store.head_position() == 1
    finally:
        first.close()
        second.close()
        for schema in schemas:
            _drop_pg_schema(schema)
