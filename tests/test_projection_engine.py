"""The projection engine: same-transaction updates, checkpoints, rebuild and rebuild --verify."""

from __future__ import annotations

import pytest

from benchledger.ledger.store.events import LEDGER_RUNS_ARCHIVED, NewEvent
from benchledger.projections.read_models.engine import checkpoints
from benchledger.projections.read_models.tables import LEDGER_ROWS
from tests.support_store import opened, table_rows, upsert_event


def _rows(s):
    with s.store.database.connect() as conn:
        return table_rows(conn, LEDGER_ROWS)


def test_read_models_update_in_the_append_transaction(db_url):
    s = opened(db_url)
    with s.store.transaction() as uow:
        uow.append([upsert_event("L", "a", 0.5)])
        seen = [r[0] for r in uow.conn.execute("SELECT run_id FROM rm_ledger_rows")]
        assert seen == ["a"]  # read-your-writes inside the command's transaction
    s.store.append([upsert_event("L", "a", 1.0), upsert_event("L", "b")])
    rows = _rows(s)
    assert [r[1] for r in rows] == ["a", "b"]
    with s.store.database.connect() as conn:
        # the row as the documented view gives it (the read model may keep it in its event)
        text = conn.execute("SELECT row FROM ledger_runs_v WHERE run_id = 'a'").scalar()
        assert '"official_score":1.0' in text
        assert checkpoints(conn)["ledger_rows"] == 3
    s.close()


def test_failed_command_rolls_back_events_and_read_models(db_url):
    s = opened(db_url)
    try:
        with s.store.transaction() as uow:
            uow.append([upsert_event("L", "a")])
            raise RuntimeError("handler failed after appending")
    except RuntimeError:
        pass
    assert s.store.head_position() == 0
    assert _rows(s) == []
    s.close()


@pytest.mark.synthetic_events  # hand-made payloads on purpose
def test_rebuild_reproduces_incremental_state(db_url):
    s = opened(db_url)
    for i in range(30):
        s.store.append([upsert_event("L", f"r{i % 7}", score=i / 30, case=f"c{i % 3}")])
    archived = {
        "run_id": "r1",
        "benchmark_id": "b",
        "case_id": "c1",
        "recorded_at": "2026-01-01T00:00:00Z",
        "archive_state": "archived",
    }
    s.store.append(
        [NewEvent("ledger/L", LEDGER_RUNS_ARCHIVED, {"ledger_id": "L", "rows": [archived]})]
    )
    before = _rows(s)
    report = s.projections.rebuild(s.store)
    assert report.events_replayed == 31
    assert _rows(s) == before
    assert s.projections.verify_rebuild(s.store).ok
    s.close()


def test_verify_rebuild_reports_a_drifted_read_model_row(db_url):
    s = opened(db_url)
    s.store.append([upsert_event("L", "a"), upsert_event("L", "b")])
    with s.store.database.begin() as conn:
        conn.execute("UPDATE rm_ledger_rows SET archived = 1 WHERE run_id = 'b'")
        conn.execute("DELETE FROM rm_ledger_rows WHERE run_id = 'a'")
    report = s.projections.verify_rebuild(s.store)
    assert not report.ok
    problems = {(d["key"][1], d["problem"]) for d in report.differences}
    assert ("a", "missing from the live read model") in problems
    assert ("b", "row differs") in problems
    s.projections.rebuild(s.store, ["ledger_rows"])
    assert s.projections.verify_rebuild(s.store).ok
    s.close()


def test_rebuild_replays_in_bounded_batches(db_url, monkeypatch):
    import benchledger.projections.read_models.replay_feed as replay_feed

    monkeypatch.setattr(replay_feed, "REPLAY_BATCH", 7)
    s = opened(db_url)
    s.store.append([upsert_event("L", f"r{i}") for i in range(50)])
    seen: list[int] = []
    s.projections.rebuild(s.store, progress=seen.append, in_database=False)
    assert seen == [7 * k for k in range(1, 8)]
    assert len(_rows(s)) == 50
    s.close()
