"""Sparse replay (only the ledger upserts no later upsert supersedes are read) rebuilds
exactly the read models the incremental path wrote, whatever the upserts of one key do to
the ledger's own row in between."""

from __future__ import annotations

import pytest

from benchledger.ledger.store.events import (
    LEDGER_IMPORTED,
    LEDGER_RUNS_ARCHIVED,
    LEDGER_UPSERTED,
    NewEvent,
)
from benchledger.projections.read_models import tables
from benchledger.projections.read_models.ledger_rows import LedgerRowsBuffer
from tests.support_store import opened, table_rows

READ_MODELS = (tables.LEDGERS, tables.LEDGER_ROWS, tables.GOAL_RUNS, tables.ROLLOUT_EVENTS)


def _row(run_id: str, i: int, **extra) -> dict:
    return {
        "run_id": run_id,
        "benchmark_id": "b",
        "case_id": f"c{i % 3}",
        "recorded_at": f"2026-06-01T00:00:{i % 60:02d}Z",
        "official_score": i / 100,
        **extra,
    }


def _upsert(ledger: str, run_id: str, i: int, **payload) -> NewEvent:
    body = {"ledger_id": ledger, "row": _row(run_id, i), "updated_at": f"t{i:04d}", **payload}
    return NewEvent(f"ledger/{ledger}", LEDGER_UPSERTED, body)


def _history() -> list[list[NewEvent]]:
    """Every way an upsert that is later superseded still matters to the ledger's row."""
    archived = {**_row("r1", 0), "archive_state": "archived"}
    return [
        # a ledger created by an import, then upserted over
        [NewEvent("ledger/L", LEDGER_IMPORTED, {"ledger_id": "L", "rows": [_row("r9", 0)]})],
        # the same key many times in one command (one replay batch)
        [_upsert("L", "r1", i) for i in range(1, 9)],
        # an empty policy first: the first non-empty one is kept, a later one is not
        [_upsert("L", "r2", 10, update_policy={})],
        [_upsert("L", "r2", 11, update_policy={"mode": "first"})],
        [_upsert("L", "r2", 12, update_policy={"mode": "ignored"})],
        # a path change in an upsert that a later upsert of the same run supersedes
        [_upsert("L", "r3", 13, ledger_path="moved/L.json")],
        [_upsert("L", "r3", 14)],
        [_upsert("L", "r3", 15, ledger_path="")],
        # an archive between two upserts of one run: the later upsert wins again
        [NewEvent("ledger/L", LEDGER_RUNS_ARCHIVED, {"ledger_id": "L", "rows": [archived]})],
        [_upsert("L", "r1", 16)],
        # an archive after the last upsert of a run: the archive wins
        [_upsert("L", "r4", 17)],
        [
            NewEvent(
                "ledger/L",
                LEDGER_RUNS_ARCHIVED,
                {"ledger_id": "L", "rows": [{**_row("r4", 18), "archive_state": "archived"}]},
            )
        ],
        # a second ledger whose first upsert is superseded, with a path that looks like {}
        [_upsert("M", "r1", 19, ledger_path="{}", update_policy={"mode": "m"})],
        [_upsert("M", "r1", 20, ledger_path="")],
        # ids a JSON function could read as something else are never folded
        [_upsert("[x]", "r1", 21), _upsert("[x]", "r1", 22)],
        [_upsert("L", "{r5}", 23), _upsert("L", "{r5}", 24)],
        # created_at comes from an upsert its run's next upsert supersedes
        [_upsert("N", "r1", 28)],
        [_upsert("N", "r1", 29)],
        # a path that is the string "[]" (JSON functions cannot tell it from an empty list)
        [_upsert("Q", "r1", 30), _upsert("Q", "r2", 31, ledger_path="[]")],
        [_upsert("Q", "r2", 32)],
        # the last event of a ledger is a superseded key's upsert's successor
        [_upsert("L", "r2", 25), _upsert("L", "r1", 26), _upsert("L", "r2", 27)],
    ]


def _snapshot(conn) -> dict[str, list[tuple]]:
    return {t.name: table_rows(conn, t) for t in READ_MODELS}


@pytest.mark.synthetic_events  # hand-made payloads on purpose
@pytest.mark.parametrize("batch", [3, 5000])
@pytest.mark.parametrize("in_database", [False, True], ids=["python", "in-database"])
def test_sparse_rebuild_equals_incremental_read_models(db_url, monkeypatch, batch, in_database):
    import benchledger.projections.read_models.replay_feed as replay_feed

    s = opened(db_url)
    for command in _history():
        s.store.append(command, metadata={"actor": "t"})
    with s.store.database.connect() as conn:
        incremental = _snapshot(conn)
        buffer = LedgerRowsBuffer(max_bytes=1)
        head = s.store.head_position(conn)
        plan = buffer.sparse_replay(conn, head) if buffer.sparse_supported(conn) else None
        up_to_3 = buffer.sparse_replay(conn, 3) if plan is not None else None
    ledgers = {r[0]: r for r in incremental["rm_ledgers"]}
    assert ledgers["L"][1] == "moved/L.json" and ledgers["L"][2] == '{"mode":"first"}'
    assert ledgers["M"][1] == "{}" and ledgers["Q"][1] == "[]"
    assert ledgers["N"][3] == "t0028"  # created_at
    if plan is not None:  # SQLite: the superseded upserts are really left out
        upserts = [e.position for e in s.store.read(event_types=[LEDGER_UPSERTED])]
        assert set(plan) < set(upserts) and plan == sorted(plan)
        assert 3 in upserts and 3 not in plan  # r1 again in the same command
        assert up_to_3 == [2, 3]  # what a replay that ends at position 3 needs
    monkeypatch.setattr(replay_feed, "REPLAY_BATCH", batch)
    report = s.projections.rebuild(s.store, in_database=in_database)
    assert report.events_replayed == s.store.head_position()  # skipped ones still count
    with s.store.database.connect() as conn:
        assert _snapshot(conn) == incremental
    assert s.projections.verify_rebuild(s.store).ok
    s.close()
